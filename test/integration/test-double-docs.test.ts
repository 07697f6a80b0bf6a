/**
 * The examples of docs/test-double.md run as a reader would run them, from a project that has
 * svcd installed (node_modules/svcd links to this repository): each TypeScript block under
 * `bun test`, the node:test block under `node --test`, the Python block under pytest with the
 * plugin. A changed kit that breaks an example fails here.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testUnless } from "../helpers/skip.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const blocks = [...readFileSync(join(ROOT, "docs/test-double.md"), "utf8").matchAll(/^```(\w+)\n([\s\S]*?)^```/gm)].map((m) => ({ lang: m[1]!, code: m[2]! }));
const kitBlocks = blocks.filter((b) => b.lang === "ts" && b.code.includes('from "svcd/testing"'));
const nodeTestBlocks = blocks.filter((b) => b.lang === "js" && b.code.includes('from "node:test"'));
const pythonBlocks = blocks.filter((b) => b.lang === "python");
const NODE = Bun.which("node");
const python = Bun.which("python3");
const pytest = python && Bun.spawnSync([python, "-c", "import pytest"]).exitCode === 0;
let project: string;

async function run(cmd: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn(cmd, { cwd: project, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  const [exit, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { exit, output: out + err };
}

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), "svcd-doc-samples-"));
  mkdirSync(join(project, "node_modules"));
  symlinkSync(ROOT, join(project, "node_modules", "svcd"));
  symlinkSync(join(ROOT, "node_modules", "@upstash"), join(project, "node_modules", "@upstash"));
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "reader", private: true, type: "module" }));
});
afterAll(() => rmSync(project, { recursive: true, force: true }));

test("the page has the examples this file runs", () => {
  expect({ kit: kitBlocks.length, nodeTest: nodeTestBlocks.length, python: pythonBlocks.length }).toEqual({ kit: 2, nodeTest: 1, python: 1 });
});

test("each TypeScript example passes under bun test", async () => {
  for (const [i, block] of kitBlocks.entries()) {
    writeFileSync(join(project, `example-${i}.test.ts`), block.code);
    const result = await run([process.execPath, "test", "--timeout", "30000", `./example-${i}.test.ts`]);
    expect({ example: i, exit: result.exit, output: result.exit === 0 ? "" : result.output }).toEqual({ example: i, exit: 0, output: "" });
    expect(result.output).toMatch(/\b[1-9]\d* pass\b/);
    expect(result.output).toContain(" 0 fail");
  }
}, 120_000);

testUnless(NODE ? null : "no node on PATH")("the node:test example passes under node --test", async () => {
  writeFileSync(join(project, "example.test.mjs"), nodeTestBlocks[0]!.code);
  const result = await run([NODE!, "--test", "--test-reporter=tap", "example.test.mjs"]);
  expect({ exit: result.exit, output: result.exit === 0 ? "" : result.output }).toEqual({ exit: 0, output: "" });
  expect(result.output).toContain("# pass 1");
}, 60_000);

testUnless(pytest ? null : "no python3 with pytest")("the pytest example passes with the plugin and --svcd-clock manual (needs python3 with pytest)", async () => {
  writeFileSync(join(project, "test_example.py"), pythonBlocks[0]!.code);
  const result = await run([python!, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "svcd_pytest", "--svcd-clock", "manual", "test_example.py"], {
    PYTHONPATH: join(ROOT, "src/testing"),
    PYTHONDONTWRITEBYTECODE: "1",
  });
  expect({ exit: result.exit, output: result.exit === 0 ? "" : result.output }).toEqual({ exit: 0, output: "" });
  expect(result.output).toContain("1 passed");
}, 60_000);
