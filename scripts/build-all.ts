/**
 * `npm run build:all`: cross-compiles svcd for every platform Bun can target, into
 * `dist/svcd-<os>-<arch>` (`.exe` on Windows). `-- --out DIR linux-x64 ...` builds only the
 * targets named, into DIR. Bun fetches each target's runtime from the npm
 * registry the first time; a target it cannot fetch is reported and skipped, the others still
 * build. The binary for this machine is also run once (`--version`) to show it starts.
 * `dist/SHA256SUMS` lists the checksum of every binary built.
 */
import { buildStamp, compile, megabytes } from "./compile.ts";
import { writeChecksums } from "./checksums.ts";

const TARGETS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "windows-x64"] as const;

const args = process.argv.slice(2);
const outAt = args.indexOf("--out");
const outDir = outAt >= 0 ? args.splice(outAt, 2)[1]! : "dist";
const unknown = args.filter((a) => !(TARGETS as readonly string[]).includes(a));
if (unknown.length > 0) {
  console.error(`build:all: unknown target ${unknown.join(", ")} (targets: ${TARGETS.join(", ")})`);
  process.exit(2);
}
const chosen = args.length > 0 ? args : TARGETS;
const host = `${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`;

const stamp = await buildStamp();
const failed: string[] = [];
const built: string[] = [];
for (const target of chosen) {
  const out = `${outDir}/svcd-${target}${target.startsWith("windows") ? ".exe" : ""}`;
  try {
    await compile(out, stamp, `bun-${target}`);
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim().split("\n").at(-1);
    console.log(`${target.padEnd(13)} not built: ${stderr || (error as Error).message}`);
    failed.push(target);
    continue;
  }
  built.push(out);
  let ran = "";
  if (target === host) {
    const run = Bun.spawnSync([out, "--version"]);
    ran = run.exitCode === 0 ? `  ran here: ${run.stdout.toString().trim()}` : `  failed to run here (exit ${run.exitCode})`;
  }
  console.log(`${target.padEnd(13)} ${out} (${megabytes(Bun.file(out).size)})${ran}`);
}
if (built.length > 0) console.log(`checksums    ${writeChecksums(outDir, built)}`);
if (failed.length > 0) process.exitCode = 1;
