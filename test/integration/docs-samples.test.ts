import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { documentedBlocks, printedEnv, settleAll, where, withPorts, type DocBlock } from "../helpers/doc-samples.ts";
import { BUN } from "../helpers/process.ts";
import { freePort, waitForPort } from "../helpers/sample-process.ts";
import { expectRanClean, startSampleWorld, type SampleWorld } from "../helpers/sample-world.ts";
import { startTestServer } from "../helpers/server.ts";

/**
 * Every code block of README.md and docs/ runs here as it is written, taken from the Markdown: a
 * doc change that breaks a sample fails this test. A block that cannot run (an output, a
 * fragment, a command that starts a server) says why in a `<!-- not run: ... -->` comment above
 * it; any other block is run, or this test fails.
 *
 * `sh` blocks run with bash against one svcd (manual clock), each with an account of its own and
 * the variables svcd prints for it (SVC_URL, SVC_TOKEN, SVC_EMAIL, ...), reset before it runs.
 * The only text substituted is a sample's own port (3000, 3001): those may be taken on this
 * machine. Samples the docs say run on Node.js and Bun run on both.
 */
const ROOT = new URL("../..", import.meta.url).pathname;
const BLOCKS = documentedBlocks(ROOT);
const runtimes = { node: "node", bun: BUN } as const;

let w: SampleWorld;

/** Publishes through svcd, flushes, and answers the message's newest log state. */
async function deliverOnce(env: Record<string, string>, url: string, body: string) {
  const call = (path: string, init?: RequestInit) => w.api(w.svcd, env.SVC_TOKEN!, path, init);
  const res = await call(`/v2/publish/${url}`, { method: "POST", body, headers: { "Svc-Retries": "0" } });
  expect(res.status).toBe(200);
  const { messageId } = (await res.json()) as { messageId: string };
  expect((await call("/__svc/flush", { method: "POST" })).status).toBe(200);
  const { logs } = (await (await call(`/v2/logs?messageId=${messageId}`)).json()) as { logs: { state: string }[] };
  return logs[0]?.state;
}

interface Handler {
  file: string;
  /** Text that picks the block out of its document. */
  has: string;
  /** Touches the shared clock: runs alone, after the others. */
  exclusive?: boolean;
  check(block: DocBlock): Promise<void>;
}

/** A receiver sample: svcd's signed delivery gets 200, an unsigned request 401. */
async function checkReceiver(block: DocBlock, runtime: "node" | "bun", ext: string) {
  const env = await w.freshAccount();
  const { code, ports } = withPorts(block.code, freePort);
  const sample = w.run([runtimes[runtime], w.writeSample(`receiver-${runtime}-${block.line}.${ext}`, code)], env);
  try {
    await waitForPort(ports["3000"]!);
    const url = `http://127.0.0.1:${ports["3000"]}/hook`;
    expect(await deliverOnce(env, url, "signed"), sample.stderr()).toBe("DELIVERED");
    const forged = await fetch(url, { method: "POST", body: "forged", headers: { "svc-signature": "x.y.z" } });
    expect(forged.status).toBe(401);
  } finally {
    sample.stop();
  }
}

const HANDLERS: Handler[] = [
  {
    file: "README.md",
    has: "export SVC_URL=http://127.0.0.1:8080",
    async check(block) {
      // What svcd prints at start for its first account (the default credentials).
      for (const line of block.code.split("\n").filter((l) => l.startsWith("export ")))
        expect(w.svcd.output()).toContain(line.replace("http://127.0.0.1:8080", w.svcd.url));
    },
  },
  {
    file: "README.md",
    has: "createServer",
    exclusive: true,
    async check(block) {
      const env = await w.freshAccount();
      const { code, ports } = withPorts(block.code, freePort);
      const r = await w.runShell({ ...block, code }, env);
      try {
        expectRanClean(r, block);
        expect(r.sample.stdout()).toContain('"messageId":"msg_');
        await waitForPort(ports["3000"]!);
        // "ten seconds later": the manual clock moves them at once.
        const advance = { method: "POST", body: '{"ms":10000}' };
        expect((await w.api(w.svcd, env.SVC_TOKEN!, "/__svc/clock/advance?flush=true", advance)).status).toBe(200);
        await r.sample.waitFor('/hook {"hello":"world"}');
        const logs = (await (await w.api(w.svcd, env.SVC_TOKEN!, "/v2/logs")).json()) as {
          logs: { state: string }[];
        };
        expect(logs.logs.map((l) => l.state)).toEqual(["DELIVERED", "ACTIVE", "CREATED"]);
      } finally {
        r.sample.stop();
      }
    },
  },
  { file: "docs/messaging-api.md", has: "verifySignature", check: (b) => checkReceiver(b, "node", "mjs") },
  { file: "docs/messaging-api.md", has: "verifySignature", check: (b) => checkReceiver(b, "bun", "mjs") },
  { file: "docs/messaging-api.md", has: "verifyRequest", check: (b) => checkReceiver(b, "bun", "ts") },
  {
    file: "docs/test-double.md",
    has: '"$SVC_URL/__svc/ready"',
    exclusive: true,
    async check(block) {
      const r = await w.runShell(block, await w.freshAccount());
      expectRanClean(r, block);
      expect(r.sample.stdout()).toContain('{"idle":true}');
      expect(r.sample.stdout()).toMatch(/"mode":"manual","timersFired":\d+/);
    },
  },
  {
    file: "docs/test-double.md",
    has: "openapi.json",
    async check(block) {
      const r = await w.runShell(block, await w.freshAccount());
      expectRanClean(r, block);
      expect(r.sample.stdout()).toContain("/v2/publish/");
      expect(readFileSync(join(w.dir, "project/svcd-api.html"), "utf8")).toContain("/openapi.json");
    },
  },
  {
    file: "docs/test-double.md",
    has: "__svc/events",
    async check(block) {
      const env = await w.freshAccount();
      const sample = w.run(["bash", "-c", block.code], env);
      try {
        await sample.waitFor("event: ready");
        const publish = { method: "POST", body: "x" };
        const published = await w.api(w.svcd, env.SVC_TOKEN!, "/v2/publish/https://example.com/hook", publish);
        expect(published.status).toBe(200);
        await sample.waitFor(/event: created\ndata: \{"type":"created","messageId":"msg_/);
      } finally {
        sample.stop();
      }
    },
  },
  ...(["node", "bun"] as const).map((runtime) => ({
    file: "docs/test-double.md",
    has: "@upstash/qstash",
    async check(block: DocBlock) {
      const { code } = withPorts(block.code, freePort);
      const file = w.writeSample(`sdk-demo-${runtime}.mjs`, code);
      const sample = w.run([runtimes[runtime], file], printedEnv(w.upstash.output(), 0));
      expect(await sample.exited, sample.stdout() + sample.stderr()).toBe(0);
      expect(sample.stdout()).toMatch(/^published msg_\S+\nverified: \{"hello":"world"\}$/m);
    },
  })),
  ...(["node", "bun"] as const).map((runtime) => ({
    file: "docs/workflows.md",
    has: "@upstash/workflow",
    async check(block: DocBlock) {
      const { code } = withPorts(block.code, freePort);
      // Named by its line too: the document's samples of the workflow SDK run at the same time.
      const file = w.writeSample(`workflow-app-${runtime}-${block.line}.mjs`, code);
      const sample = w.run([runtimes[runtime], file], printedEnv(w.upstash.output(), 0));
      expect(await sample.exited, sample.stdout() + sample.stderr()).toBe(0);
      // The last two lines of the output the doc shows right below the sample.
      const below = BLOCKS.find((b) => b.file === block.file && b.line > block.line && b.notRun)!;
      const shown = below.code.trim().split("\n");
      expect(sample.stdout().trim().split("\n").slice(-2)).toEqual(shown.slice(-2));
    },
  })),
];

/** A config file sample starts svcd (in this process: the path `--config` takes) with its accounts. */
async function checkConfig(block: DocBlock) {
  const file = join(w.dir, `config-${block.file.replace(/\W/g, "-")}-${block.line}.json`);
  writeFileSync(file, block.code);
  const server = await startTestServer({ config: { configFile: file } });
  try {
    const emails = server.ctx.accounts.all().map((a) => a.email);
    expect(emails).toEqual((JSON.parse(block.code) as { accounts: { email: string }[] }).accounts.map((a) => a.email));
  } finally {
    await server.stop();
  }
}

/** How the suite runs a block: its handlers, else by its language; null when it has no way. */
function plan(block: DocBlock): Array<() => Promise<void>> | null {
  if (block.notRun) return [];
  const mine = HANDLERS.filter((h) => h.file === block.file && block.code.includes(h.has));
  if (mine.length) return mine.map((h) => () => h.check(block));
  if (block.lang === "sh")
    return [async () => expectRanClean(await w.runShell(block, await w.freshAccount()), block)];
  if (block.lang === "json" && block.code.includes('"accounts"')) return [() => checkConfig(block)];
  return null;
}

let outcome: Promise<Map<DocBlock, unknown[]>>;

beforeAll(async () => {
  w = await startSampleWorld(ROOT, 24);
  const shared: Array<[DocBlock, Array<() => Promise<void>>]> = [];
  const alone: Array<[DocBlock, Array<() => Promise<void>>]> = [];
  for (const block of BLOCKS) {
    const jobs = plan(block);
    if (!jobs?.length) continue;
    const exclusive = HANDLERS.some((h) => h.exclusive && h.file === block.file && block.code.includes(h.has));
    (exclusive ? alone : shared).push([block, jobs]);
  }
  const settle = async (entries: typeof shared, limit: number) => {
    const flat = entries.flatMap(([block, jobs]) => jobs.map((job) => [block, job] as const));
    const errors = await settleAll(flat.map(([, job]) => job), limit);
    return flat.map(([block], i) => [block, errors[i]] as const);
  };
  outcome = (async () => {
    const results = [...(await settle(shared, 4)), ...(await settle(alone, 1))];
    const byBlock = new Map<DocBlock, unknown[]>();
    for (const [block, error] of results) byBlock.set(block, [...(byBlock.get(block) ?? []), error].filter(Boolean));
    return byBlock;
  })();
}, 90_000);

afterAll(() => w?.stop());

test("every block of README.md and docs/ is run, or says why not", () => {
  const unplanned = BLOCKS.filter((b) => plan(b) === null).map((b) => `${where(b)} (${b.lang || "no language"})`);
  expect(unplanned).toEqual([]);
  for (const h of HANDLERS)
    expect(BLOCKS.some((b) => b.file === h.file && b.code.includes(h.has)), `${h.file}: ${h.has}`).toBe(true);
  expect(BLOCKS.filter((b) => !b.notRun).length).toBeGreaterThan(20);
  const runElsewhere = BLOCKS.flatMap((b) => (b.notRun?.startsWith("run by ") ? [b.notRun.slice(7)] : []));
  for (const file of new Set(runElsewhere)) expect(existsSync(join(ROOT, file)), file).toBe(true);
});

test("the samples' public destinations were answered on this machine", async () => {
  await outcome;
  expect(w.proxy.requests).toContain("CONNECT example.com:443 HTTP/1.1");
});

test("the line of server.ts architecture.md quotes is there", () => {
  const quoted = BLOCKS.find((b) => b.file === "docs/architecture.md" && b.lang === "ts")!;
  expect(readFileSync(join(ROOT, "src/server.ts"), "utf8")).toContain(quoted.code.trim());
});

for (const block of BLOCKS.filter((b) => !b.notRun))
  test(`${where(block)} (${block.lang}) runs as written`, async () => {
    const errors = (await outcome).get(block) ?? [];
    if (errors.length) throw errors[0];
    expect(errors).toEqual([]);
  }, 120_000);
