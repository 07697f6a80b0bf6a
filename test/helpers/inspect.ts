import { expect } from "bun:test";
import { checkConsistency, checkPostgresConsistency, type ConsistencyOptions } from "./consistency.ts";
import type { TestServer } from "./server.ts";
import { waitUntil } from "./wait.ts";

export interface LogEntry {
  time: number;
  messageId: string;
  state: string;
  url: string;
  error?: string;
  nextDeliveryTime?: number;
  responseStatus?: number;
  responseBody?: string;
}

export type DlqMessage = Record<string, any> & { dlqId: string; messageId: string };

/** Every log entry of a message, oldest first. */
export async function logsOf(s: TestServer, messageId: string, token?: string): Promise<LogEntry[]> {
  const res = await s.api(`/v2/logs?messageId=${messageId}&count=1000`, token ? { token } : {});
  expect(res.status).toBe(200);
  return ((await res.json()) as { logs: LogEntry[] }).logs.reverse();
}

/** Waits until the message's newest log entry is one of `states`; returns its whole log. */
export async function waitForState(s: TestServer, messageId: string, states: string[], timeoutMs = 15_000) {
  return waitUntil(
    async () => {
      const logs = await logsOf(s, messageId);
      return states.includes(logs.at(-1)?.state ?? "") ? logs : undefined;
    },
    { timeoutMs, intervalMs: 25, what: `message ${messageId} to reach ${states.join(" or ")}` },
  );
}

export async function dlqEntryOf(s: TestServer, messageId: string): Promise<DlqMessage | undefined> {
  const res = await s.api(`/v2/dlq?messageId=${messageId}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { messages: DlqMessage[] }).messages[0];
}

/**
 * The server is idle (nothing due, nothing in flight) and its own consistency checks hold,
 * including "no ACTIVE message without an attempt in flight".
 */
export async function expectIdleAndConsistent(s: TestServer, timeoutMs = 15_000) {
  const engine = s.server.messaging.probe;
  const idle = await Promise.race([
    engine.whenIdle().then(() => true),
    Bun.sleep(timeoutMs).then(() => false),
  ]);
  expect(idle).toBe(true);
  expect(await consistencyProblems(s, { inFlight: (id) => engine.isInFlight(id) })).toEqual([]);
}

/** The consistency checks over the server's database, whichever engine it runs on. */
export async function consistencyProblems(s: TestServer, opts: ConsistencyOptions = {}): Promise<string[]> {
  const storage = s.server.storage;
  return storage.kind === "postgres" ? checkPostgresConsistency(storage.sql, opts) : checkConsistency(storage.db, opts);
}

/** How many messages the server's database holds (live ones: waiting, in flight, retrying), whichever engine it runs on. */
export async function storedMessages(s: TestServer): Promise<number> {
  const storage = s.server.storage;
  if (storage.kind === "sqlite") return storage.db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM messages").get()!.n;
  const [row] = await storage.sql`SELECT count(*) AS n FROM messages`;
  return Number(row.n);
}
