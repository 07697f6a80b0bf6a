/**
 * `npm run build:all`: cross-compiles svcd for every platform Bun can target, into
 * `dist/svcd-<os>-<arch>` (`.exe` on Windows). Bun fetches each target's runtime from the npm
 * registry the first time; a target it cannot fetch is reported and skipped, the others still
 * build. The binary for this machine is also run once (`--version`) to show it starts.
 */
import { buildStamp, compile, megabytes } from "./compile.ts";

const TARGETS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "windows-x64"] as const;
const host = `${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`;

const stamp = await buildStamp();
const failed: string[] = [];
for (const target of TARGETS) {
  const out = `dist/svcd-${target}${target.startsWith("windows") ? ".exe" : ""}`;
  try {
    await compile(out, stamp, `bun-${target}`);
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim().split("\n").at(-1);
    console.log(`${target.padEnd(13)} not built: ${stderr || (error as Error).message}`);
    failed.push(target);
    continue;
  }
  let ran = "";
  if (target === host) {
    const run = Bun.spawnSync([out, "--version"]);
    ran = run.exitCode === 0 ? `  ran here: ${run.stdout.toString().trim()}` : `  failed to run here (exit ${run.exitCode})`;
  }
  console.log(`${target.padEnd(13)} ${out} (${megabytes(Bun.file(out).size)})${ran}`);
}
if (failed.length > 0) process.exitCode = 1;
