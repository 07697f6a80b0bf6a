import { Database, constants } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { defaultConfig } from "../../src/config/config.ts";
import { createLogger } from "../../src/core/log.ts";
import { createServer } from "../../src/server.ts";
import { BUN, MAIN, spawnServer } from "../helpers/process.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer } from "../helpers/server.ts";
import { tmpfsMissing, fillUp, withTmpfs } from "../helpers/tmpfs.ts";
import { testUnless } from "../helpers/skip.ts";
import { waitUntil } from "../helpers/wait.ts";

/**
 * A restart after a crash must recover the messages that were in flight. When storage cannot be
 * written at that moment (disk full, database locked), svcd still starts: it answers reads, answers
 * writes with 503, reports not ready, and recovers and delivers by itself once storage is back.
 * A start on a full disk after a clean stop works too: the stop keeps the files SQLite needs.
 */

let rx: Receiver;
/** Receivers that answer only when told: their messages stay in flight. */
let holding = true;
const held: Array<() => void> = [];
beforeAll(async () => {
  rx = await startReceiver(async () => {
    if (holding) await new Promise<void>((resolve) => held.push(resolve));
    return new Response("ok");
  });
});
afterAll(() => {
  for (const release of held) release();
  rx.stop();
});

const publishTo = (base: string, token: string, path: string) =>
  fetch(`${base}/v2/publish/${rx.url}${path}`, { method: "POST", body: path, headers: { authorization: `Bearer ${token}` } });

test("the database is locked at start: svcd answers, 503 on writes, not ready; recovers and delivers once the lock is gone", async () => {
  holding = true;
  // A first run whose attempts never got an answer: at its stop they stay in flight (ACTIVE).
  const first = await startTestServer({ config: { busyTimeoutMs: 100 } });
  const dbPath = first.config.dbPath!;
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push(((await (await first.api(`/v2/publish/${rx.url}/locked/${i}`, { method: "POST", body: "x" })).json()) as { messageId: string }).messageId);
  await rx.waitFor(5);
  await first.server.stop({ deadlineMs: 50 });
  const before = rx.received.length;

  const other = new Database(dbPath);
  other.run("BEGIN IMMEDIATE");
  let locked = true;
  const lines: string[] = [];
  const second = await createServer(
    { ...defaultConfig(first.dir), port: 0, dbPath, busyTimeoutMs: 100, shutdownTimeoutMs: 500 },
    { logger: createLogger({ level: "info", format: "json", write: (line) => lines.push(line) }) },
  );
  try {
    const running = await second.start();
    const ready = await fetch(`${running.url}/__svc/ready`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { error: string }).error).toContain("recovering the previous run");
    expect((await fetch(`${running.url}/__svc/health`)).status).toBe(200);
    // Reads answer; writes answer 503; nothing is delivered yet.
    expect((await fetch(`${running.url}/v2/messages/${ids[0]}`, { headers: { authorization: `Bearer ${first.token}` } })).status).toBe(200);
    expect((await publishTo(running.url, first.token, "/while-locked")).status).toBe(503);
    expect(lines.some((l) => l.includes("recovering the previous run waits for storage"))).toBe(true);
    expect(rx.received.length).toBe(before);

    holding = false;
    other.run("COMMIT");
    other.close();
    locked = false;
    await waitUntil(async () => (await fetch(`${running.url}/__svc/ready`)).status === 200, { what: "ready after the lock is gone" });
    // Every message in flight at the stop is delivered again, without a publish to wake delivery.
    await rx.waitFor(before + ids.length, { match: (r) => r.path.startsWith("/locked/") });
    expect(rx.received.filter((r) => r.path === "/while-locked")).toHaveLength(0);
    expect((await publishTo(running.url, first.token, "/after-lock")).status).toBe(200);
    await rx.waitFor(1, { match: (r) => r.path === "/after-lock" });
  } finally {
    if (locked) {
      other.run("ROLLBACK");
      other.close();
    }
    await second.stop({ deadlineMs: 500 });
    rmSync(first.dir, { recursive: true, force: true });
  }
}, 30_000);

testUnless(tmpfsMissing())("kill -9 with deliveries in flight, restart on a full disk: it starts, answers 503, and recovers once space returns", async () => {
  await withTmpfs({ size: "4m" }, async (mount) => {
    holding = true;
    const db = join(mount, "svcd.sqlite");
    const start = () => spawnServer([BUN, MAIN, "--port", "0", "--db", db, "--log-level", "info"], { env: { SVC_TOKEN: "disk-token" } });
    const first = await start();
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) {
      const res = await publishTo(first.url, "disk-token", `/disk/${i}`);
      expect(res.status).toBe(200);
      ids.push(((await res.json()) as { messageId: string }).messageId);
    }
    await rx.waitFor(50, { match: (r) => r.path.startsWith("/disk/") });
    first.proc.kill("SIGKILL");
    await first.proc.exited;

    // Empty the write-ahead log (keeping the file, as a crash leaves it), then take every byte
    // left: any write at start has to grow it.
    const check = new Database(db);
    check.fileControl(constants.SQLITE_FCNTL_PERSIST_WAL, 1);
    check.run("PRAGMA wal_checkpoint(TRUNCATE)");
    check.close();
    const filler = join(mount, "filler");
    fillUp(filler);

    const second = await start();
    try {
      expect(second.proc.exitCode).toBeNull();
      const ready = await fetch(`${second.url}/__svc/ready`);
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as { error: string }).error).toMatch(/recovering the previous run: .*full/);
      const refused = await publishTo(second.url, "disk-token", "/while-full");
      expect(refused.status).toBe(503);
      expect(((await refused.json()) as { error: string }).error).toStartWith("storage unavailable");
      expect(second.output()).toContain("recovering the previous run waits for storage");

      holding = false;
      rmSync(filler);
      await waitUntil(async () => (await fetch(`${second.url}/__svc/ready`)).status === 200, { what: "ready once space returns" });
      const redelivered = await rx.waitFor(100, { match: (r) => r.path.startsWith("/disk/"), timeoutMs: 15_000 });
      expect(new Set(redelivered.map((r) => r.headers.get("svc-message-id")))).toEqual(new Set(ids));
      expect((await publishTo(second.url, "disk-token", "/after-full")).status).toBe(200);
      await rx.waitFor(1, { match: (r) => r.path === "/after-full" });
    } finally {
      expect(await second.stop()).toBe(0);
    }
  });
}, 60_000);

testUnless(tmpfsMissing())("a clean stop, then a start on a full disk: it starts, serves reads, answers 503 on writes, and recovers once space returns", async () => {
  await withTmpfs({ size: "4m" }, async (mount) => {
    holding = false;
    const db = join(mount, "svcd.sqlite");
    const start = () => spawnServer([BUN, MAIN, "--port", "0", "--db", db, "--log-level", "info"], { env: { SVC_TOKEN: "clean-token" } });
    const first = await start();
    const delayed = await fetch(`${first.url}/v2/publish/${rx.url}/clean/delayed`, {
      method: "POST",
      body: "later",
      headers: { authorization: "Bearer clean-token", "Svc-Delay": "1h" },
    });
    expect(delayed.status).toBe(200);
    const { messageId } = (await delayed.json()) as { messageId: string };
    expect(await first.stop()).toBe(0);
    // The stop checkpointed everything (the WAL is empty) and kept the files a start needs.
    expect(statSync(`${db}-wal`).size).toBe(0);
    expect(statSync(`${db}-shm`).size).toBeGreaterThan(0);

    const filler = join(mount, "filler");
    fillUp(filler);
    const second = await start();
    try {
      expect(second.proc.exitCode).toBeNull();
      expect((await fetch(`${second.url}/__svc/health`)).status).toBe(200);
      const read = await fetch(`${second.url}/v2/messages/${messageId}`, { headers: { authorization: "Bearer clean-token" } });
      expect(read.status).toBe(200);
      const refused = await publishTo(second.url, "clean-token", "/clean/while-full");
      expect(refused.status).toBe(503);
      expect(((await refused.json()) as { error: string }).error).toStartWith("storage unavailable");

      rmSync(filler);
      await waitUntil(async () => (await publishTo(second.url, "clean-token", "/clean/after-full")).status === 200, { what: "publish accepted once space returns" });
      await rx.waitFor(1, { match: (r) => r.path === "/clean/after-full" });
      expect(rx.received.filter((r) => r.path === "/clean/while-full")).toHaveLength(0);
    } finally {
      expect(await second.stop()).toBe(0);
    }
  });
}, 60_000);
