import { Database } from "bun:sqlite";
import { checkConsistency } from "./consistency.ts";
import { prng } from "./fuzz.ts";
import { BUN, MAIN, spawnServer, type ServerProcess } from "./process.ts";

/**
 * kill -9 at random moments while messages are published and delivered (plain, delayed, retried,
 * failing into the DLQ, through a URL Group, a FIFO queue and a flow-control key), restart on the
 * same database, then check what the promise says: every acknowledged message arrives (or, when it was
 * meant to fail, is in the DLQ), retries keep their schedule across restarts, DLQ and logs agree,
 * and the database file is intact. Used by the quick test and by scripts/crash-soak.ts.
 */

export interface CrashOptions {
  dir: string;
  /** Messages to acknowledge (each publish that failed because of a kill is published again). */
  total: number;
  /** SIGKILLs: all but the last while publishing, the last while only deliveries and retries run. */
  kills: number;
  seed: number;
  /** Publish a share of the messages to a URL Group (fan-out to two endpoints). */
  groups: boolean;
  log?: (line: string) => void;
  concurrency?: number;
}

export interface CrashReport {
  seed: number;
  acked: number;
  kills: number;
  killedAt: string[];
  deliveries: number;
  duplicates: number;
  retriesChecked: number;
  delaysChecked: number;
  dlqEntries: number;
  durationMs: number;
  /** Every broken promise, one line each; empty when all held. */
  problems: string[];
}

const TOKEN = "crash-harness-token";
const RETRY_DELAY_MS = 3_000;
const DELAY_S = 2;
/** Timers may fire a millisecond early and clocks of two processes differ by rounding. */
const SLACK_MS = 25;

type Category = "ok" | "retry" | "dead" | "delay" | "group" | "queue" | "flow";
const CYCLE: Category[] = ["ok", "ok", "queue", "ok", "retry", "retry", "dead", "delay", "group", "flow"];

interface Attempt {
  id: string;
  retried: number;
  at: number;
  status: number;
  path: string;
}

interface Acked {
  i: number;
  category: Category;
  ids: string[];
  startedAt: number;
}

export async function runCrashScenario(opts: CrashOptions): Promise<CrashReport> {
  const t0 = Date.now();
  const r = prng(opts.seed);
  const log = opts.log ?? (() => {});
  const problems: string[] = [];
  const attempts = new Map<string, Attempt[]>();
  const categories: Category[] = opts.groups ? CYCLE : CYCLE.map((c) => (c === "group" ? "ok" : c));

  const receiver = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(req) {
      const at = Date.now();
      await req.arrayBuffer();
      const path = new URL(req.url).pathname;
      const id = req.headers.get("svc-message-id") ?? "";
      const retried = Number(req.headers.get("svc-retried") ?? -1);
      let status = 200;
      if (path.startsWith("/dead/")) status = 500;
      else if (path.startsWith("/retry/") && retried === 0) status = 500;
      const list = attempts.get(id) ?? [];
      list.push({ id, retried, at, status, path });
      attempts.set(id, list);
      // A little latency keeps attempts in flight when the kill comes.
      if (r.chance(0.3)) await Bun.sleep(r.int(4));
      return new Response(status === 200 ? "ok" : "fail", { status });
    },
  });
  const rx = `http://127.0.0.1:${receiver.port}`;
  const db = `${opts.dir}/crash.sqlite`;
  const auth = { authorization: `Bearer ${TOKEN}` };
  const start = () =>
    spawnServer([BUN, MAIN, "--port", "0", "--db", db, "--log-level", "error", "--workers", "2"], {
      env: { SVC_TOKEN: TOKEN, SVC_PLAN: "payg" },
    });

  let server: ServerProcess = await start();
  /** Resolves once a restarted server is up; publishers wait on it after a failed request. */
  let up: Promise<void> = Promise.resolve();
  const killedAt: string[] = [];
  let kills = 0;

  const kill = async (when: string) => {
    let restarted!: () => void;
    up = new Promise((resolve) => (restarted = resolve));
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    kills++;
    killedAt.push(when);
    log(`kill ${kills} ${when}`);
    server = await start();
    restarted();
  };

  const queue = await fetch(`${server.url}/v2/queues`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ queueName: "crash-queue", parallelism: 2 }),
  });
  if (queue.status !== 200) throw new Error(`cannot create the queue: ${queue.status} ${await queue.text()}`);
  if (opts.groups) {
    const res = await fetch(`${server.url}/v2/topics/crash-group/endpoints`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ endpoints: [{ name: "one", url: `${rx}/group/one` }, { name: "two", url: `${rx}/group/two` }] }),
    });
    if (res.status !== 200) throw new Error(`cannot create the URL Group: ${res.status} ${await res.text()}`);
  }

  // Kill points: spread over publishing, at random acknowledged counts.
  const publishKills = Math.max(0, opts.kills - 1);
  const thresholds = Array.from({ length: publishKills }, (_, k) =>
    Math.floor(((k + 0.2 + r.next() * 0.6) / publishKills) * opts.total * 0.95),
  ).sort((a, b) => a - b);

  const acked: Acked[] = [];
  let next = 0;
  let killing: Promise<void> | null = null;
  const publishOne = async (i: number): Promise<void> => {
    const category = categories[i % categories.length]!;
    const headers: Record<string, string> = { ...auth };
    let target = `${rx}/${category}/${i}`;
    if (category === "retry") Object.assign(headers, { "Svc-Retries": "3", "Svc-Retry-Delay": String(RETRY_DELAY_MS) });
    if (category === "dead") headers["Svc-Retries"] = "0";
    if (category === "delay") headers["Svc-Delay"] = `${DELAY_S}s`;
    if (category === "group") target = "crash-group";
    // FIFO, two at a time: parked messages must survive the kill and move on after it.
    if (category === "queue") headers["Svc-Queue-Name"] = "crash-queue";
    // At most four in flight for the key: held messages must be released after the kill.
    if (category === "flow") Object.assign(headers, { "Svc-Flow-Control-Key": "crash-key", "Svc-Flow-Control-Value": "parallelism=4" });
    for (;;) {
      await up;
      const startedAt = Date.now();
      try {
        const res = await fetch(`${server.url}/v2/publish/${target}`, { method: "POST", body: `message ${i}`, headers });
        if (res.status !== 200) throw new Error(`publish ${i}: ${res.status} ${await res.text()}`);
        const body = (await res.json()) as { messageId: string } | Array<{ messageId: string }>;
        const ids = Array.isArray(body) ? body.map((b) => b.messageId) : [body.messageId];
        acked.push({ i, category, ids, startedAt });
        return;
      } catch (error) {
        // The server died under this publish: it was never acknowledged; publish it again.
        if (!String(error).includes("publish")) {
          await Bun.sleep(5);
          continue;
        }
        throw error;
      }
    }
  };
  const publisher = async () => {
    while (next < opts.total) {
      const i = next++;
      await publishOne(i);
      if (thresholds.length && acked.length >= thresholds[0]! && !killing) {
        thresholds.shift();
        killing = kill(`after ${acked.length} acknowledged publishes`).finally(() => (killing = null));
      }
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency ?? 24 }, publisher));
  if (killing) await killing;

  // The last kill: while only deliveries, delayed messages and retries are under way.
  if (opts.kills > publishKills) {
    await Bun.sleep(200 + r.int(1_500));
    await kill(`${Date.now() - t0} ms in, publishing done, retries pending`);
  }

  // Wait until every acknowledged message ended: delivered with a 200, or (dead ones) in the DLQ.
  const delivered = (id: string) => attempts.get(id)?.some((a) => a.status === 200) ?? false;
  const dlqIds = new Map<string, string>();
  const readDlq = async () => {
    let cursor: string | undefined;
    do {
      const res = await fetch(`${server.url}/v2/dlq?count=100${cursor ? `&cursor=${cursor}` : ""}`, { headers: auth });
      const page = (await res.json()) as { cursor?: string; messages: Array<{ messageId: string; dlqId: string }> };
      for (const m of page.messages) dlqIds.set(m.messageId, m.dlqId);
      cursor = page.cursor;
    } while (cursor);
  };
  // For a message that never comes; a loaded machine took over 45 s to deliver what was left.
  const deadline = Date.now() + 120_000;
  for (;;) {
    const pending = acked.flatMap((a) => a.ids.filter((id) => (a.category === "dead" ? !dlqIds.has(id) : !delivered(id))));
    if (pending.length === 0) break;
    if (Date.now() > deadline) {
      problems.push(`${pending.length} acknowledged message(s) never arrived nor reached the DLQ, e.g. ${pending.slice(0, 5).join(", ")}`);
      break;
    }
    await Bun.sleep(100);
    if (acked.some((a) => a.category === "dead" && a.ids.some((id) => !dlqIds.has(id)))) await readDlq();
  }
  await readDlq();

  // Retries kept their schedule, across restarts too.
  let retriesChecked = 0;
  let delaysChecked = 0;
  for (const a of acked) {
    for (const id of a.ids) {
      const list = (attempts.get(id) ?? []).slice().sort((x, y) => x.at - y.at);
      if (a.category === "retry") {
        for (const later of list.filter((x) => x.retried > 0)) {
          const previous = list.filter((x) => x.retried === later.retried - 1 && x.at <= later.at).at(-1);
          if (!previous) {
            problems.push(`${id}: attempt with Svc-Retried ${later.retried} without an earlier attempt ${later.retried - 1}`);
            continue;
          }
          retriesChecked++;
          if (later.at + SLACK_MS < previous.at + RETRY_DELAY_MS)
            problems.push(`${id}: retry ${later.retried} came ${later.at - previous.at} ms after the failed attempt, before its ${RETRY_DELAY_MS} ms delay`);
        }
      }
      if (a.category === "delay" && list.length) {
        delaysChecked++;
        if (list[0]!.at + SLACK_MS < a.startedAt + DELAY_S * 1000)
          problems.push(`${id}: delayed ${DELAY_S}s but arrived ${list[0]!.at - a.startedAt} ms after publishing`);
      }
      if (a.category === "dead" && delivered(id)) problems.push(`${id}: meant to fail but got a 200`);
    }
  }
  // No message both delivered and in the DLQ.
  for (const [messageId, dlqId] of dlqIds)
    if (delivered(messageId)) problems.push(`${messageId} was delivered (200) and is in the DLQ as ${dlqId}`);
  const ackedIds = new Set(acked.flatMap((a) => a.ids));
  const expectedDead = acked.filter((a) => a.category === "dead").flatMap((a) => a.ids);
  for (const id of expectedDead) if (!dlqIds.has(id)) problems.push(`${id} failed but is not in the DLQ`);

  // Stop cleanly and look inside the database.
  const code = await server.stop("SIGTERM");
  if (code !== 0) problems.push(`the last server exited with ${code} on SIGTERM`);
  receiver.stop(true);
  const check = new Database(db, { readonly: true });
  try {
    const integrity = check.query<{ integrity_check: string }, []>("PRAGMA integrity_check").get()?.integrity_check;
    if (integrity !== "ok") problems.push(`integrity_check: ${integrity}`);
    for (const p of checkConsistency(check)) problems.push(`consistency: ${p}`);
    const left = check.query<{ id: string; state: string }, []>("SELECT id, state FROM messages").all();
    if (left.length) problems.push(`${left.length} message(s) still waiting after everything ended, e.g. ${JSON.stringify(left.slice(0, 3))}`);
    const events = check
      .query<{ message_id: string; state: string }, []>(
        "SELECT message_id, state FROM events WHERE state IN ('CREATED', 'DELIVERED', 'FAILED')",
      )
      .all();
    const seen = new Map<string, Set<string>>();
    for (const e of events) {
      const states = seen.get(e.message_id) ?? new Set<string>();
      states.add(e.state);
      seen.set(e.message_id, states);
    }
    for (const id of ackedIds) {
      const states = seen.get(id);
      const dead = dlqIds.has(id);
      if (!states?.has("CREATED")) problems.push(`${id}: acknowledged but no CREATED in the log`);
      if (dead && !states?.has("FAILED")) problems.push(`${id}: in the DLQ but the log has no FAILED`);
      if (dead && states?.has("DELIVERED")) problems.push(`${id}: in the DLQ and DELIVERED in the log`);
      if (!dead && !states?.has("DELIVERED")) problems.push(`${id}: arrived but the log has no DELIVERED`);
    }
  } finally {
    check.close();
  }

  let deliveries = 0;
  let duplicates = 0;
  for (const id of ackedIds) {
    const ok = (attempts.get(id) ?? []).filter((a) => a.status === 200).length;
    deliveries += ok;
    if (ok > 1) duplicates += ok - 1;
  }
  return {
    seed: opts.seed,
    acked: ackedIds.size,
    kills,
    killedAt,
    deliveries,
    duplicates,
    retriesChecked,
    delaysChecked,
    dlqEntries: dlqIds.size,
    durationMs: Date.now() - t0,
    problems: problems.slice(0, 50),
  };
}
