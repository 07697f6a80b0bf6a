/**
 * The durable floor on threads: `fronts` worker threads each run a Bun.serve on one port
 * (SO_REUSEPORT: the kernel spreads the connections), read the body and hand it here; this thread
 * only stores, one prepared INSERT per publish in a group commit per event-loop turn (as
 * ../durable-floor.ts), and hands the ids back. Publish only (no delivery): what moving HTTP off
 * the writing thread gives, or costs, on this machine's cores.
 *
 *   bun scripts/bench/floor-threads/writer.ts <database file> [fronts = 2]
 */
import { Database } from "bun:sqlite";
import type { FromFront, ToFront } from "./front.ts";

const file = process.argv[2];
if (!file) {
  console.error("usage: bun scripts/bench/floor-threads/writer.ts <database file> [fronts]");
  process.exit(2);
}
const fronts = Number(process.argv[3] ?? 2);
const db = new Database(file, { create: true, strict: true });
db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");
db.exec(
  "CREATE TABLE messages (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL, url TEXT NOT NULL, body BLOB NOT NULL)",
);
const insert = db.prepare<void, [string, number, string, Uint8Array]>("INSERT INTO messages VALUES (?, ?, ?, ?)");
const begin = db.prepare("BEGIN");
const commit = db.prepare("COMMIT");

let seq = 0;
let pending: Array<{ front: Worker; batch: Extract<FromFront, { type: "store" }> }> = [];

function flush() {
  const batches = pending;
  pending = [];
  begin.run();
  const now = Date.now();
  const answers = batches.map(({ batch }) =>
    batch.urls.map((url, i) => {
      const id = `msg_${now.toString(36)}${(seq++).toString(36).padStart(8, "0")}`;
      insert.run(id, now, url, batch.bodies[i]!);
      return id;
    }),
  );
  commit.run();
  batches.forEach(({ front, batch }, i) => front.postMessage({ type: "stored", tags: batch.tags, ids: answers[i]! } satisfies ToFront));
}

let port = 0;
for (let i = 0; i < fronts; i++) {
  const front = new Worker(new URL("./front.ts", import.meta.url).href);
  await new Promise<void>((listening) => {
    front.onmessage = (event: MessageEvent<FromFront>) => {
      const msg = event.data;
      if (msg.type === "listening") {
        port = msg.port;
        listening();
        return;
      }
      if (pending.push({ front, batch: msg }) === 1) setImmediate(flush);
    };
    // The first front binds a free port; the others bind the same one.
    front.postMessage({ type: "listen", port } satisfies ToFront);
  });
}
console.log(`floor-threads listening on http://127.0.0.1:${port}`);
