/**
 * `npm run build:npm`: assembles the publishable npm packages into `dist/npm/` from the binaries
 * `npm run build:all` wrote, the way esbuild ships its binaries: one package per platform
 * (`@svcd/linux-x64`, ...: the binary, with `os` and `cpu` so npm installs only the matching one),
 * and `svcd` itself: the bin shim (bin/svcd.cjs), `svcd/testing`, `svcd/verify`, and every
 * platform package as an optional dependency. The repository's own package.json stays private:
 * it holds the sources and the development tools, which users do not need.
 *
 * `bun scripts/npm-packages.ts [--from DIR] [--out DIR]`; then `npm publish` each folder
 * (the platform packages first), or `npm pack` them.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../package.json" with { type: "json" };

const PLATFORMS = [
  { target: "linux-x64", os: "linux", cpu: "x64" },
  { target: "linux-arm64", os: "linux", cpu: "arm64" },
  { target: "darwin-x64", os: "darwin", cpu: "x64" },
  { target: "darwin-arm64", os: "darwin", cpu: "arm64" },
  { target: "windows-x64", os: "win32", cpu: "x64" },
] as const;

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => (args.includes(name) ? args[args.indexOf(name) + 1]! : fallback);
const from = option("--from", "dist");
const out = option("--out", join("dist", "npm"));
const ROOT = new URL("..", import.meta.url).pathname;

const common = { version: pkg.version, license: pkg.license };
/** Every package carries its manifest and the license's text (npm ships a LICENSE file whatever `files` says). */
const write = (dir: string, manifest: object) => {
  writeFileSync(join(dir, "package.json"), JSON.stringify(manifest, null, 2) + "\n");
  copyFileSync(join(ROOT, "LICENSE"), join(dir, "LICENSE"));
};

rmSync(out, { recursive: true, force: true });
const built: string[] = [];
for (const { target, os, cpu } of PLATFORMS) {
  const exe = os === "win32" ? ".exe" : "";
  const binary = join(from, `svcd-${target}${exe}`);
  if (!existsSync(binary)) continue;
  const dir = join(out, `svcd-${target}`);
  mkdirSync(join(dir, "bin"), { recursive: true });
  copyFileSync(binary, join(dir, "bin", `svcd${exe}`));
  chmodSync(join(dir, "bin", `svcd${exe}`), 0o755);
  write(dir, { name: `@svcd/${target}`, ...common, description: `The svcd executable for ${os} ${cpu}.`, os: [os], cpu: [cpu], files: ["bin"], preferUnplugged: true });
  writeFileSync(join(dir, "README.md"), `# @svcd/${target}\n\nThe svcd executable for ${os} ${cpu}; install \`svcd\`, which picks the right one.\n`);
  built.push(dir);
}
if (built.length === 0) {
  console.error(`build:npm: no svcd-<platform> binary in ${from}; run npm run build:all first`);
  process.exit(2);
}

const main = join(out, "svcd");
const files = [
  "bin/svcd.cjs",
  ...["find-binary.cjs", "testing.cjs", "testing.mjs", "testing.d.ts", "svcd_pytest.py"].map((f) => `src/testing/${f}`),
  "src/signing/verify.js",
  "src/signing/verify.d.ts",
  "README.md",
  "CHANGELOG.md",
];
for (const file of files) {
  mkdirSync(join(main, file, ".."), { recursive: true });
  copyFileSync(join(ROOT, file), join(main, file));
}
chmodSync(join(main, "bin/svcd.cjs"), 0o755);
write(main, {
  name: "svcd",
  ...common,
  description: pkg.description,
  type: "module",
  bin: { svcd: "bin/svcd.cjs" },
  exports: pkg.exports,
  files: ["bin", "src"],
  engines: { node: ">=18" },
  // Every platform's package, even those not built here: npm installs the one matching os and cpu.
  optionalDependencies: Object.fromEntries(PLATFORMS.map(({ target }) => [`@svcd/${target}`, pkg.version])),
});
for (const dir of [...built, main]) console.log(`${dir}`);
