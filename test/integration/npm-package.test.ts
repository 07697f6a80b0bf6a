/**
 * `npx svcd`, as a user gets it: build:all builds this machine's binary (with its SHA256SUMS),
 * build:npm assembles the packages, `npm pack` packs them, and an empty project installs the
 * tarballs offline (npm's registry set to a dead loopback port, so nothing is fetched). Then
 * `npx svcd --version`, a publish and its delivery through the installed svcd, and svcd/testing
 * from the installed package, which starts the platform package's binary.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { BUN, spawnServer } from "../helpers/process.ts";
import { startReceiver } from "../helpers/receiver.ts";
import { testUnless } from "../helpers/skip.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const HOST = `${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`;
const NPM = Bun.which("npm");
const NODE = Bun.which("node");
let dir: string;
let project: string;
let env: Record<string, string>;

async function run(cmd: string[], cwd: string) {
  const proc = Bun.spawn(cmd, { cwd, env, stdout: "pipe", stderr: "pipe" });
  const [exit, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  if (exit !== 0) throw new Error(`${cmd.join(" ")} exited ${exit}:\n${out}${err}`);
  return out;
}

beforeAll(async () => {
  if (!NPM || !NODE) return;
  dir = mkdtempSync(join(tmpdir(), "svcd-npm-"));
  project = join(dir, "user-app");
  mkdirSync(project);
  mkdirSync(join(dir, "tgz"));
  // Offline: a private cache, and a registry nobody answers on.
  env = { ...process.env, PATH: `${ROOT}node_modules/.bin:${process.env.PATH}`, npm_config_cache: join(dir, "npm-cache"), npm_config_registry: "http://127.0.0.1:9/", npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false" } as Record<string, string>;
  await run([BUN, "scripts/build-all.ts", "--out", join(dir, "dist"), HOST], ROOT);
  await run([BUN, "scripts/npm-packages.ts", "--from", join(dir, "dist"), "--out", join(dir, "npm")], ROOT);
  await run([NPM!, "pack", "--offline", "--pack-destination", join(dir, "tgz"), join(dir, "npm", "svcd"), join(dir, "npm", `svcd-${HOST}`)], dir);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "user-app", version: "1.0.0", private: true, type: "module" }));
  await run([NPM!, "install", "--offline", join(dir, "tgz", `svcd-${pkg.version}.tgz`), join(dir, "tgz", `svcd-${HOST}-${pkg.version}.tgz`)], project);
}, 240_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

testUnless(NPM && NODE ? null : "no npm or node on PATH")("build:all wrote SHA256SUMS that sha256sum accepts", () => {
  const check = Bun.spawnSync(["sha256sum", "-c", "SHA256SUMS"], { cwd: join(dir, "dist") });
  expect(check.stdout.toString()).toBe(`svcd-${HOST}: OK\n`);
});

testUnless(NPM && NODE ? null : "no npm or node on PATH")("the installed packages: svcd with the shim, and only this platform's binary package", () => {
  const main = JSON.parse(readFileSync(join(project, "node_modules/svcd/package.json"), "utf8"));
  expect(main).toMatchObject({ name: "svcd", version: pkg.version, bin: { svcd: "bin/svcd.cjs" } });
  expect(main.private).toBeUndefined();
  expect(Object.keys(main.optionalDependencies)).toEqual(["@svcd/linux-x64", "@svcd/linux-arm64", "@svcd/darwin-x64", "@svcd/darwin-arm64", "@svcd/windows-x64"]);
  const platform = JSON.parse(readFileSync(join(project, `node_modules/@svcd/${HOST}/package.json`), "utf8"));
  expect(platform).toMatchObject({ name: `@svcd/${HOST}`, version: pkg.version });
});

testUnless(NPM && NODE ? null : "no npm or node on PATH")("every package says it is MIT-licensed and ships the license's text", () => {
  const license = readFileSync(join(ROOT, "LICENSE"), "utf8");
  expect(license).toStartWith("MIT License\n");
  expect(pkg.license).toBe("MIT");
  for (const installed of ["node_modules/svcd", `node_modules/@svcd/${HOST}`]) {
    expect(JSON.parse(readFileSync(join(project, installed, "package.json"), "utf8")).license).toBe("MIT");
    expect(readFileSync(join(project, installed, "LICENSE"), "utf8")).toBe(license);
  }
});

testUnless(NPM && NODE ? null : "no npm or node on PATH")("npx svcd --version runs the prebuilt binary and names package.json's version", async () => {
  const out = await run([NPM!, "exec", "--offline", "--", "svcd", "--version"], project);
  expect(out).toStartWith(`svcd ${pkg.version} (commit `);
  expect(out).toContain(`built `);
  expect(out.trim()).toEndWith(`${HOST})`);
}, 60_000);

testUnless(NPM && NODE ? null : "no npm or node on PATH")("a publish through the installed svcd reaches a receiver; SIGTERM to the shim stops svcd cleanly", async () => {
  const rx = await startReceiver();
  const server = await spawnServer([join(project, "node_modules/.bin/svcd"), "--port", "0", "--memory"], { cwd: project, env: { SVC_TOKEN: "npm-token" } });
  try {
    const res = await fetch(`${server.url}/v2/publish/${rx.url}/from-npm`, { method: "POST", body: "installed", headers: { authorization: "Bearer npm-token" } });
    expect(res.status).toBe(200);
    const [delivery] = await rx.waitFor(1);
    expect(delivery!.text).toBe("installed");
    expect(server.output()).toContain("database: in memory");
  } finally {
    rx.stop();
    expect(await server.stop("SIGTERM")).toBe(0);
  }
}, 60_000);

testUnless(NPM && NODE ? null : "no npm or node on PATH")("svcd/testing from the installed package starts the platform package's binary", async () => {
  writeFileSync(
    join(project, "kit.mjs"),
    `import { startSvcd, findSvcd } from "svcd/testing";
const svc = await startSvcd({ clock: "manual" });
const status = await (await svc.request("/__svc/status")).json();
console.log(JSON.stringify({ command: findSvcd().command, clock: status.clock.mode }));
await svc.stop();
`,
  );
  const out = JSON.parse(await run([NODE!, "kit.mjs"], project));
  expect(out).toEqual({ command: join(project, `node_modules/@svcd/${HOST}/bin/svcd`), clock: "manual" });
}, 60_000);
