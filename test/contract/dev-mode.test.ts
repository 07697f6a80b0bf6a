/**
 * `QSTASH_DEV=true` finds `svcd dev`: an app using the official SDKs (`@upstash/qstash`,
 * `@upstash/workflow`) in dev mode, run by Node with every non-loopback connection refused and
 * recorded (dev-mode/no-internet.mjs), publishes, verifies with `Receiver` and runs a workflow's
 * serve() against svcd, and never tries to download the SDK's own dev server. A control run
 * against a server with other keys shows the guard does catch the SDK's download. The `curl` of
 * docs/workflows.md that starts a run in dev mode runs as written against such an app.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { extractBlocks } from "../helpers/doc-samples.ts";
import { BUN, MAIN, spawnServer, type ServerProcess } from "../helpers/process.ts";
import { startTestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

const NODE = Bun.which("node");
const HERE = new URL("./dev-mode/", import.meta.url).pathname;
const ROOT = new URL("../..", import.meta.url).pathname;
const DEV_TOKEN = "eyJVc2VySUQiOiJkZWZhdWx0VXNlciIsIlBhc3N3b3JkIjoiZGVmYXVsdFBhc3N3b3JkIn0=";
let dir: string;
let dev: ServerProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svcd-devmode-"));
  // Variables a user exported for another svcd must not make the SDKs miss this one.
  dev = await spawnServer([BUN, MAIN, "dev", "-port=0"], { env: { SVC_TOKEN: "exported-earlier", SVC_DB: join(dir, "no", "such.sqlite"), SVC_LOG_LEVEL: "warn" } });
});
afterAll(async () => {
  await dev?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs app.mjs as a user's Node process would, offline but for loopback. */
async function runApp(mode: "full" | "probe", port: string) {
  const log = join(dir, `connections-${mode}-${port}.log`);
  writeFileSync(log, "");
  const env: Record<string, string> = { PATH: process.env.PATH ?? "", HOME: dir, QSTASH_DEV: "true", QSTASH_DEV_PORT: port, NO_INTERNET_LOG: log };
  const proc = Bun.spawn([NODE!, "--import", join(HERE, "no-internet.mjs"), join(HERE, "app.mjs"), mode], { env, stdout: "pipe", stderr: "pipe" });
  const [exit, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  const plain = (stdout + stderr).replace(/\x1b\[[\d;]*m/g, "");
  return { exit, stdout, output: plain, attempted: readFileSync(log, "utf8").split("\n").filter(Boolean) };
}

describe.skipIf(!NODE)(`the official SDKs' dev mode against svcd dev${NODE ? "" : " (skipped: no node on PATH)"}`, () => {
  test("svcd dev prints that QSTASH_DEV=true finds it, runs in memory, and answers /v2/keys with the dev keys", async () => {
    const port = new URL(dev.url).port;
    expect(dev.output()).toContain("database: in memory  dialect: upstash");
    expect(dev.output()).toContain(`QSTASH_DEV=true QSTASH_DEV_PORT=${port}`);
    expect(dev.output()).toContain(`console: ${dev.url}/console#token=`);
    const keys = await fetch(`${dev.url}/v2/keys`, { headers: { authorization: `Bearer ${DEV_TOKEN}` } });
    expect(await keys.json()).toEqual({ current: "sig_7kYjw48mhY7kAjqNGcy6cr29RJ6r", next: "sig_5ZB6DVzB1wjE8S6rZ7eenA8Pdnhs" });
  });

  test("publish, Receiver.verify and a workflow's serve() work with only QSTASH_DEV set, and nothing is downloaded", async () => {
    const port = new URL(dev.url).port;
    const app = await runApp("full", port);
    expect({ exit: app.exit, output: app.exit === 0 ? "" : app.output }).toEqual({ exit: 0, output: "" });
    expect(app.attempted).toEqual([]);
    expect(app.output).toContain(`[QStash Dev] Server already running at http://127.0.0.1:${port}`);
    expect(app.output).not.toContain("Downloading");
    const seen = JSON.parse(app.stdout.trim().split("\n").at(-1)!);
    expect(seen.messageId).toMatch(/^msg_/);
    expect(seen.delivery).toEqual({ body: '{"hello":"dev mode"}', verified: true, tampered: false });
    expect(seen.unsignedWorkflowStatus).not.toBe(200);
    expect(seen.workflow).toEqual({ workflowRunId: expect.stringMatching(/^wfr_/), result: 42, state: "RUN_SUCCESS" });
  }, 90_000);

  test("docs/workflows.md's curl starts a run of a dev-mode app through svcd, as written", async () => {
    const [block] = extractBlocks("docs/workflows.md", readFileSync(join(ROOT, "docs/workflows.md"), "utf8")).filter((b) => b.code.includes("/v2/trigger/"));
    expect(block?.notRun).toBe("run by test/contract/dev-mode.test.ts");
    const port = new URL(dev.url).port;
    const env: Record<string, string> = { PATH: process.env.PATH ?? "", HOME: dir, QSTASH_DEV: "true", QSTASH_DEV_PORT: port };
    const app = Bun.spawn([NODE!, join(HERE, "app.mjs"), "serve"], { env, stdout: "pipe", stderr: "pipe" });
    try {
      const reader = app.stdout.getReader();
      let printed = "";
      while (!/listening on \d+\n/.test(printed)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the app ended: ${await new Response(app.stderr).text()}`);
        printed += new TextDecoder().decode(value);
      }
      const appPort = /listening on (\d+)/.exec(printed)![1]!;
      // The sample's own ports: svcd dev's (8080) and the app's (3001).
      const code = block!.code.replaceAll("127.0.0.1:8080", `127.0.0.1:${port}`).replaceAll("127.0.0.1:3001", `127.0.0.1:${appPort}`);
      const curl = Bun.spawnSync(["bash", "-c", code], { stdout: "pipe", stderr: "pipe" });
      expect(curl.exitCode).toBe(0);
      const { workflowRunId } = JSON.parse(curl.stdout.toString()) as { workflowRunId: string };
      expect(workflowRunId).toStartWith("wfr_");
      const run = await waitUntil(async () => {
        const res = await fetch(`${dev.url}/v2/workflows/logs?workflowRunId=${workflowRunId}`, { headers: { authorization: `Bearer ${DEV_TOKEN}` } });
        const found = ((await res.json()) as { runs: Array<{ workflowState: string; workflowRunResponse?: string }> }).runs[0];
        return found?.workflowState === "RUN_STARTED" ? undefined : found;
      }, { timeoutMs: 20_000, what: `run ${workflowRunId} to end` });
      expect(run).toMatchObject({ workflowState: "RUN_SUCCESS", workflowRunResponse: '"hello ada"' });
    } finally {
      app.kill();
    }
  }, 60_000);

  test("control: against a server with other keys the SDK tries to download its dev server, and the guard records it", async () => {
    const other = await startTestServer({ config: { dialect: "upstash" } });
    try {
      const app = await runApp("probe", new URL(other.url).port);
      expect(app.output).not.toContain("Server already running");
      expect(app.attempted.length).toBeGreaterThan(0);
      expect(app.attempted.every((host) => !/^(127\.|localhost|::1)/.test(host))).toBe(true);
    } finally {
      await other.stop();
    }
  }, 60_000);
});
