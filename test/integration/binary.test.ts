import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { BUN, spawnServer, type ServerProcess } from "../helpers/process.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { verifySignature } from "../../src/signing/verify.js";
import pkg from "../../package.json" with { type: "json" };

const ROOT = new URL("../..", import.meta.url).pathname;
let dir: string;
let binary: string;
let server: ServerProcess;
let rx: Receiver;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svcd-bin-"));
  binary = join(dir, "svcd");
  const build = Bun.spawn([BUN, "scripts/build.ts", binary], { cwd: ROOT, stdout: "pipe", stderr: "pipe", env: { ...process.env, PATH: `${join(ROOT, "node_modules/.bin")}:${process.env.PATH}` } });
  if ((await build.exited) !== 0) throw new Error(await new Response(build.stderr).text());
  // A directory with its own .env and bunfig.toml: the binary must ignore both.
  const cwd = join(dir, "elsewhere");
  Bun.spawnSync(["mkdir", "-p", cwd]);
  writeFileSync(join(cwd, ".env"), "SVC_TOKEN=from-dotenv\nSVC_PORT=1\n");
  writeFileSync(join(cwd, "bunfig.toml"), "this is [not valid toml\n");
  server = await spawnServer([binary, "--port", "0", "--memory"], { cwd, env: { SVC_TOKEN: "bin-token" } });
  rx = await startReceiver();
}, 120_000);

afterAll(async () => {
  rx?.stop();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("the compiled binary is one file that answers health from any directory", async () => {
  expect(statSync(binary).size).toBeGreaterThan(1_000_000);
  const res = await fetch(`${server.url}/__svc/health`);
  expect(res.status).toBe(200);
  expect(server.output()).toContain("export SVC_TOKEN=bin-token");
});

test("the binary's worker threads deliver a signed message and its callback", async () => {
  const publish = await fetch(`${server.url}/v2/publish/${rx.url}/bin-target`, {
    method: "POST",
    body: "from the binary",
    headers: { authorization: "Bearer bin-token", "Svc-Callback": `${rx.url}/bin-callback` },
  });
  expect(publish.status).toBe(200);
  const { messageId } = (await publish.json()) as { messageId: string };
  const [delivery] = await rx.waitFor(1, { match: (r) => r.path === "/bin-target" });
  expect(delivery!.text).toBe("from the binary");
  expect(delivery!.headers.get("svc-message-id")).toBe(messageId);
  const keys = (await (await fetch(`${server.url}/v2/keys`, { headers: { authorization: "Bearer bin-token" } })).json()) as { current: string; next: string };
  const verdict = await verifySignature({ signature: delivery!.headers.get("svc-signature")!, body: delivery!.body, currentSigningKey: keys.current, nextSigningKey: keys.next, url: delivery!.url });
  expect(verdict.ok).toBe(true);
  const [callback] = await rx.waitFor(1, { match: (r) => r.path === "/bin-callback" });
  const body = JSON.parse(callback!.text);
  expect(body.sourceMessageId).toBe(messageId);
  expect(body.status).toBe(200);
});

test("the binary's --version names the version, the commit and the build date embedded at build time", async () => {
  const run = Bun.spawnSync([binary, "--version"], { cwd: dir });
  expect(run.exitCode).toBe(0);
  expect(run.stderr.toString()).toBe("");
  const head = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { cwd: ROOT }).stdout.toString().trim();
  const text = run.stdout.toString().trim();
  expect(text).toStartWith(`svcd ${pkg.version} (commit `);
  expect(text).toMatch(/^svcd \d+\.\d+\.\d+ \(commit \S+, built \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ, bun /);
  if (head) expect(text).toContain(`commit ${head}`);
});

test("the binary serves the web console from the bundle embedded in it", async () => {
  expect(server.output()).toContain(`console: ${server.url}/console#token=bin-token`);
  const page = await fetch(`${server.url}/console/dlq`);
  expect(page.status).toBe(200);
  expect(page.headers.get("content-type")).toContain("text/html");
  const html = await page.text();
  const assets = [...html.matchAll(/(?:src|href)="(\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]!);
  expect(assets.length).toBeGreaterThanOrEqual(2);
  const bodies = await Promise.all(
    assets.map(async (path) => {
      const res = await fetch(server.url + path);
      expect(res.status).toBe(200);
      return { type: res.headers.get("content-type") ?? "", text: await res.text() };
    }),
  );
  const script = bodies.find((b) => b.type.includes("javascript"))!;
  const styles = bodies.find((b) => b.type.includes("css"))!;
  // Preact, uPlot and the pages are in the bundle; nothing is loaded from elsewhere.
  expect(script.text.length).toBeGreaterThan(50_000);
  expect(script.text).toContain("/__svc/status");
  expect(styles.text).toContain(".u-legend");
  expect(html + script.text + styles.text).not.toMatch(/https?:\/\/(?!127\.0\.0\.1|localhost)[a-z0-9.-]+\.[a-z]{2,}\/[^"'\s)]*\.(?:js|css|woff2?)/i);
});

test("the binary serves /metrics (prom-client compiled in), with its build info", async () => {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: "Bearer svcd_dev_metrics_token" } });
  expect(res.status).toBe(200);
  const text = await res.text();
  expect(text).toMatch(/^svcd_build_info\{version="\d+\.\d+\.\d+",commit="[^"]+"\} 1$/m);
  expect(text).toContain("# TYPE svcd_messages_published_total counter");
});

test("the binary serves /mcp (the MCP SDK and zod compiled in) to the SDK's own client", async () => {
  const client = new Client({ name: "binary-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: "Bearer bin-token" } } }));
  try {
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === "list_logs")?.annotations?.readOnlyHint).toBe(true);
    const result = (await client.callTool({ name: "list_logs", arguments: { count: 5 } })) as { content: Array<{ text: string }>; isError?: boolean };
    expect(result.isError).toBeUndefined();
    expect(JSON.parse(result.content[0]!.text).logs.length).toBeGreaterThan(0);
  } finally {
    await client.close();
  }
});
