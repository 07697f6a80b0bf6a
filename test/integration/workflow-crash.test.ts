import { Client as QStashClient, Receiver } from "@upstash/qstash";
import { Client as WorkflowClient, serve } from "@upstash/workflow";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUN, MAIN, spawnServer, type ServerProcess } from "../helpers/process.ts";
import { waitUntil } from "../helpers/wait.ts";

/**
 * kill -9 of a svcd subprocess in the middle of a workflow run, and a restart on the same
 * database: the run finishes, every step's function ran at least once, and the result is right.
 */

const TOKEN = "workflow-crash-token";
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "svcd-wf-crash-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("kill -9 while a step runs, restart: the run finishes with the right result, each step ran at least once", async () => {
  const db = join(dir, "svcd.sqlite");
  const start = (port: number) =>
    spawnServer([BUN, MAIN, "--port", String(port), "--db", db, "--dialect", "upstash", "--log-level", "error"], {
      env: { SVC_TOKEN: TOKEN },
    });
  let server: ServerProcess = await start(0);
  const port = Number(new URL(server.url).port);

  const ran: Record<string, number> = { fetch: 0, enrich: 0, total: 0, report: 0 };
  let reachedTotal!: () => void;
  const atTotal = new Promise<void>((resolve) => (reachedTotal = resolve));
  let release!: () => void;
  const killed = new Promise<void>((resolve) => (release = resolve));

  const keys = (await (await fetch(`${server.url}/v2/keys`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as {
    current: string;
    next: string;
  };
  const qstash = new QStashClient({ baseUrl: server.url, token: TOKEN, retry: false });
  const { handler } = serve<{ items: number[] }>(
    async (context) => {
      const items = await context.run("fetch", () => (ran.fetch!++, context.requestPayload.items));
      const doubled = await context.run("enrich", () => (ran.enrich!++, items.map((n) => n * 2)));
      const total = await context.run("total", async () => {
        ran.total!++;
        if (ran.total === 1) {
          // The first time only: svcd dies while this step runs.
          reachedTotal();
          await killed;
        }
        return doubled.reduce((a, b) => a + b, 0);
      });
      return await context.run("report", () => (ran.report!++, `total=${total}`));
    },
    {
      qstashClient: qstash,
      receiver: new Receiver({ currentSigningKey: keys.current, nextSigningKey: keys.next }),
      env: {},
    },
  );
  const app = Bun.serve({ port: 0, hostname: "127.0.0.1", idleTimeout: 0, fetch: handler });
  const client = new WorkflowClient({ baseUrl: server.url, token: TOKEN, retry: false });
  try {
    const { workflowRunId } = await client.trigger({ url: `http://127.0.0.1:${app.port}/wf`, body: { items: [1, 2, 3, 4] } });
    await atTotal;
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    // The step finishes with svcd gone: its result cannot be handed in, the delivery never answered.
    release();
    server = await start(port);

    const run = await waitUntil(
      async () => {
        const { runs } = await client.logs({ workflowRunId });
        return runs[0]?.workflowState === "RUN_SUCCESS" ? runs[0] : undefined;
      },
      { timeoutMs: 20_000, what: "the run to finish after the restart" },
    );
    expect(run.workflowRunResponse).toBe('"total=20"');
    // Delivery is at least once: the step in flight at the kill ran again, and so may a step whose
    // delivery's answer was not yet recorded; the run still holds each step's result once.
    for (const step of ["fetch", "enrich", "report"]) expect(ran[step]).toBeGreaterThanOrEqual(1);
    expect(ran.total).toBeGreaterThanOrEqual(2);
    const names = run.steps.filter((g) => g.type === "sequential").map((g) => g.steps[0]!.stepName);
    expect(names).toEqual(["init", "fetch", "enrich", "total", "report"]);
  } finally {
    app.stop(true);
    await server.stop();
  }
}, 60_000);
