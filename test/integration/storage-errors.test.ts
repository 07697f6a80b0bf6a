import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_METRICS_TOKEN } from "../../src/config/config.ts";
import { checkConsistency } from "../helpers/consistency.ts";
import { parseExposition } from "../helpers/prometheus.ts";
import { createLogger } from "../../src/core/log.ts";
import { expectIdleAndConsistent, waitForState } from "../helpers/inspect.ts";
import { BUN, MAIN, spawnServer } from "../helpers/process.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { tmpfsMissing, withTmpfs } from "../helpers/tmpfs.ts";
import { testUnless } from "../helpers/skip.ts";
import { waitUntil } from "../helpers/wait.ts";

/**
 * Storage errors answer 503 {"error"} and never a 200 for a message that was not stored; the
 * engine neither dies nor stalls while the database is locked or full, and resumes after.
 */

/** Another connection takes SQLite's write lock (as a backup tool or a second process would). */
function holdWriteLock(dbPath: string) {
  const other = new Database(dbPath);
  other.run("PRAGMA busy_timeout = 5000");
  other.run("BEGIN IMMEDIATE");
  return () => {
    other.run("COMMIT");
    other.close();
  };
}

async function expect503(res: Response) {
  expect(res.status).toBe(503);
  expect(res.headers.get("content-type")).toContain("application/json");
  const body = (await res.json()) as Record<string, unknown>;
  expect(Object.keys(body)).toEqual(["error"]);
  expect(String(body.error)).toStartWith("storage unavailable");
  return String(body.error);
}

let rx: Receiver;
const holds: Array<() => void> = [];
beforeAll(async () => {
  rx = await startReceiver(async (req) => {
    if (req.path.startsWith("/held")) await new Promise<void>((resolve) => holds.push(resolve));
    return new Response("ok");
  });
});
afterAll(() => {
  for (const release of holds) release();
  rx.stop();
});

describe("the database is locked by another connection longer than the busy timeout", () => {
  let s: TestServer;
  const lines: string[] = [];
  beforeAll(async () => {
    s = await startTestServer({
      config: { busyTimeoutMs: 150 },
      logger: createLogger({ level: "error", format: "json", write: (line) => lines.push(line) }),
    });
  });
  afterAll(() => s.stop());

  test("publish answers 503 and stores nothing; once the lock is gone it works again", async () => {
    const release = holdWriteLock(s.config.dbPath!);
    let error: string;
    try {
      // The answer comes while the other connection still holds the lock (it is released below):
      // the publish gave up after the busy timeout instead of waiting for the lock to go.
      const res = await s.api(`/v2/publish/${rx.url}/locked`, { method: "POST", body: "never stored" });
      error = await expect503(res);
      // The other writes of the messaging API fail the same way.
      await expect503(await s.api("/v2/messages/msg_unknown", { method: "DELETE" }));
      await expect503(await s.api("/v2/dlq/1-0", { method: "DELETE" }));
      // A batch answers 503 as a whole, not a 200 whose elements each say the storage failed.
      const batch = [{ destination: `${rx.url}/locked-batch`, body: "one" }, { destination: "ftp://refused" }];
      const json = { "content-type": "application/json" };
      await expect503(await s.api("/v2/batch", { method: "POST", headers: json, body: JSON.stringify(batch) }));
    } finally {
      release();
    }
    expect(error).toContain("locked");
    const all = (await (await s.api("/v2/logs")).json()) as { logs: unknown[] };
    expect(all.logs).toEqual([]);
    expect(s.db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM messages").get()!.n).toBe(0);

    const ok = await s.api(`/v2/publish/${rx.url}/after-lock`, { method: "POST", body: "stored" });
    expect(ok.status).toBe(200);
    const { messageId } = (await ok.json()) as { messageId: string };
    expect((await waitForState(s, messageId, ["DELIVERED"])).at(-1)!.state).toBe("DELIVERED");
  });

  test("a due message and an answer that arrive while locked are recorded once the lock is gone", async () => {
    // One attempt is in flight (the receiver holds its answer), one message falls due during the lock.
    const inFlight = await s.api(`/v2/publish/${rx.url}/held`, { method: "POST", body: "a" });
    const inFlightId = ((await inFlight.json()) as { messageId: string }).messageId;
    await rx.waitFor(1, { match: (r) => r.path === "/held" });
    const due = await s.api(`/v2/publish/${rx.url}/due-while-locked`, { method: "POST", body: "b", headers: { "Svc-Delay": "1s" } });
    const dueId = ((await due.json()) as { messageId: string }).messageId;

    const release = holdWriteLock(s.config.dbPath!);
    try {
      holds.shift()!(); // the answer arrives now: recording it fails until the lock is gone
      // The delayed message falls due under the lock: claiming it fails too, and is tried again.
      await waitUntil(() => lines.some((l) => l.includes("recording delivery outcomes failed")), { what: "a failed outcome write" });
      await waitUntil(() => lines.filter((l) => l.includes("claiming due messages failed")).length >= 2, {
        what: "two failed claims",
      });
      expect(rx.received.filter((r) => r.path === "/due-while-locked")).toHaveLength(0);
    } finally {
      release();
    }
    for (const id of [inFlightId, dueId]) {
      const logs = await waitForState(s, id, ["DELIVERED"]);
      expect(logs.filter((l) => l.state === "DELIVERED")).toHaveLength(1);
    }
    // The held answer was recorded, not lost and delivered again.
    expect(rx.received.filter((r) => r.path === "/held")).toHaveLength(1);
    await expectIdleAndConsistent(s);
  });
});

describe("a cancel whose commit fails", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.stop());

  test("a cancel that could not be stored leaves the attempt in flight its own: its answer is recorded", async () => {
    const res = await s.api(`/v2/publish/${rx.url}/held-cancel`, { method: "POST", body: "c" });
    const { messageId } = (await res.json()) as { messageId: string };
    await rx.waitFor(1, { match: (r) => r.path === "/held-cancel" });
    // The cancel's write runs, and its log entry is refused: the write is not stored.
    s.db.run(`CREATE TRIGGER refuse_cancel BEFORE INSERT ON events WHEN NEW.state = 'CANCELED'
      BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`);
    try {
      await expect503(await s.api(`/v2/messages/${messageId}`, { method: "DELETE" }));
    } finally {
      s.db.run("DROP TRIGGER refuse_cancel");
    }
    holds.shift()!(); // the receiver answers 200 now
    // A disowned attempt's answer was ignored: the message stayed ACTIVE, never delivered again nor logged.
    const logs = await waitForState(s, messageId, ["DELIVERED"]);
    expect(logs.map((l) => l.state)).toEqual(["CREATED", "ACTIVE", "DELIVERED"]);
    // The refused write is counted where an operator looks (its transaction, the rest of it, committed).
    const metrics = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${DEFAULT_METRICS_TOKEN}` } });
    const exposition = parseExposition(await metrics.text());
    expect(exposition.value("svcd_storage_writes_refused_total")).toBe(1);
    expect(exposition.value("svcd_storage_commits_total", { result: "failed" })).toBe(0);
    await expectIdleAndConsistent(s);
  });
});

test("a subprocess server survives a lock held past its busy timeout, answers 503, and resumes", async () => {
  const dir = mkdtempSync(join(tmpdir(), "svcd-lock-"));
  const db = join(dir, "svcd.sqlite");
  const server = await spawnServer([BUN, MAIN, "--port", "0", "--db", db, "--busy-timeout", "100", "--log-level", "error"], {
    env: { SVC_TOKEN: "lock-token" },
  });
  const publish = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${server.url}/v2/publish/${rx.url}${path}`, {
      method: "POST",
      body: path,
      headers: { authorization: "Bearer lock-token", ...headers },
    });
  try {
    const due = await publish("/sub/due", { "Svc-Delay": "1s" });
    expect(due.status).toBe(200);
    const release = holdWriteLock(db);
    try {
      await expect503(await publish("/sub/refused"));
      // The message falls due while the lock is held: the dispatcher fails to claim it, repeatedly.
      await waitUntil(() => server.output().split("claiming due messages failed").length > 3, {
        what: "repeated failed claims",
      });
      expect(server.proc.exitCode).toBeNull();
    } finally {
      release();
    }
    await rx.waitFor(1, { match: (r) => r.path === "/sub/due", timeoutMs: 10_000 });
    expect(rx.received.filter((r) => r.path === "/sub/refused")).toHaveLength(0);
  } finally {
    expect(await server.stop()).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  }
}, 30_000);

describe("the disk is full", () => {
  test("SQLITE_FULL (page limit reached) on publish: 503, nothing stored, and fine again once there is room", async () => {
    const s = await startTestServer();
    try {
      const db = s.db;
      const pages = db.query<{ page_count: number }, []>("PRAGMA page_count").get()!.page_count;
      db.run(`PRAGMA max_page_count = ${pages}`);
      for (let i = 0; i < 3; i++) {
        const error = await expect503(
          await s.api(`/v2/publish/${rx.url}/full?svc-delay=1h`, { method: "POST", body: new Uint8Array(64 * 1024) }),
        );
        expect(error).toContain("full");
      }
      db.run("PRAGMA max_page_count = 1073741823");
      expect(db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM messages").get()!.n).toBe(0);
      expect(((await (await s.api("/v2/logs")).json()) as { logs: unknown[] }).logs).toEqual([]);
      const ok = await s.api(`/v2/publish/${rx.url}/room-again`, { method: "POST", body: "x" });
      expect(ok.status).toBe(200);
      await expectIdleAndConsistent(s);
    } finally {
      await s.stop();
    }
  });

  // A real full file system needs a tmpfs mount (root); elsewhere the page-limit test above stands in.
  testUnless(tmpfsMissing())("a 2 MB file system fills up: every 200 was stored, the rest got 503, kill -9 and restart lose nothing", async () => {
    await withTmpfs({ size: "2m" }, async (dir) => {
      const db = join(dir, "svcd.sqlite");
      const start = () =>
        spawnServer([BUN, MAIN, "--port", "0", "--db", db, "--log-level", "error"], { env: { SVC_TOKEN: "full-token" } });
      const auth = { authorization: "Bearer full-token" };
      const server = await start();
      const acked: string[] = [];
      const statuses = new Map<number, number>();
      for (let i = 0; i < 120; i++) {
        const res = await fetch(`${server.url}/v2/publish/${rx.url}/fs/${i}?svc-delay=1h`, {
          method: "POST",
          body: new Uint8Array(32 * 1024).fill(65 + (i % 26)),
          headers: auth,
        });
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status === 200) acked.push(((await res.json()) as { messageId: string }).messageId);
        else await expect503(res);
      }
      expect([...statuses.keys()].sort()).toEqual([200, 503]);
      expect(acked.length).toBeGreaterThan(3);
      expect(server.proc.exitCode).toBeNull();
      for (const id of acked) expect((await fetch(`${server.url}/v2/messages/${id}`, { headers: auth })).status).toBe(200);

      server.proc.kill("SIGKILL");
      await server.proc.exited;
      const again = await start();
      try {
        for (const id of acked) expect((await fetch(`${again.url}/v2/messages/${id}`, { headers: auth })).status).toBe(200);
      } finally {
        again.proc.kill("SIGKILL");
        await again.proc.exited;
      }
      const check = new Database(db, { readonly: true });
      try {
        expect(check.query<{ integrity_check: string }, []>("PRAGMA integrity_check").get()!.integrity_check).toBe("ok");
        const stored = check.query<{ id: string }, []>("SELECT id FROM messages").all().map((r) => r.id);
        expect(stored.sort()).toEqual([...acked].sort());
        expect(checkConsistency(check)).toEqual([]);
      } finally {
        check.close();
      }
    });
  }, 30_000);
});
