/**
 * The floor of a durable relay on this machine: one Bun.serve thread that reads the body, stores it
 * with one prepared INSERT into bun:sqlite (WAL, synchronous=NORMAL, as svcd) in a group commit per
 * event-loop turn, and answers after the COMMIT with a fresh id. Unless the publish carries
 * `Svc-Delay`, it then POSTs the body to the destination (64 at once at most) and deletes the row
 * once the answer was 2XX, in the next group commit. No authentication, options, retries, log,
 * indexes beyond the key, or metrics: what any durable relay in Bun pays at least, so that rows
 * 1, 1b and 2b can say how far svcd is from it, and not only from servers that store nothing.
 *
 * `--tight`: the tighter floor of rows 1t–2t: the row is `(id INTEGER PRIMARY KEY, url, body)`, its
 * key the rowid, no timestamp. Most of the distance between the two floors is the text key's index.
 */
import { Database, type Statement } from "bun:sqlite";

const PREFIX = "/v2/publish/";
const AT_ONCE = 64;

// The database file is the first argument (scripts/bench/procs.ts startFloor gives a fresh one).
const file = process.argv[2];
const tight = process.argv.includes("--tight");
if (!file) {
  console.error("usage: bun scripts/bench/durable-floor.ts <database file> [--tight]");
  process.exit(2);
}
const db = new Database(file, { create: true, strict: true });
db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");
db.exec(
  tight
    ? "CREATE TABLE messages (id INTEGER PRIMARY KEY, url TEXT NOT NULL, body BLOB NOT NULL)"
    : "CREATE TABLE messages (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL, url TEXT NOT NULL, body BLOB NOT NULL)",
);
type Key = string | number;
const insertRow = tight
  ? db.prepare<void, [number, string, Uint8Array]>("INSERT INTO messages VALUES (?, ?, ?)")
  : db.prepare<void, [string, number, string, Uint8Array]>("INSERT INTO messages VALUES (?, ?, ?, ?)");
const insert = (id: Key, now: number, url: string, body: Uint8Array) =>
  tight
    ? (insertRow as Statement<void, [number, string, Uint8Array]>).run(id as number, url, body)
    : (insertRow as Statement<void, [string, number, string, Uint8Array]>).run(id as string, now, url, body);
const remove = db.prepare<void, [Key]>("DELETE FROM messages WHERE id = ?");
const begin = db.prepare("BEGIN");
const commit = db.prepare("COMMIT");

interface Stored {
  id: Key;
  url: string;
  body: Uint8Array<ArrayBuffer>;
  deliver: boolean;
  done: () => void;
}

let seq = 0;
let inserts: Stored[] = [];
let deletions: Key[] = [];
let flushing = false;
const toDeliver: Stored[] = [];
let underWay = 0;

function scheduleFlush() {
  if (!flushing) {
    flushing = true;
    setImmediate(flush);
  }
}

function flush() {
  flushing = false;
  const batch = inserts;
  const gone = deletions;
  inserts = [];
  deletions = [];
  begin.run();
  const now = Date.now();
  for (const m of batch) insert(m.id, now, m.url, m.body);
  for (const id of gone) remove.run(id);
  commit.run();
  for (const m of batch) {
    m.done();
    if (m.deliver) toDeliver.push(m);
  }
  deliverMore();
}

function deliverMore() {
  while (underWay < AT_ONCE && toDeliver.length > 0) {
    const m = toDeliver.shift()!;
    underWay++;
    fetch(m.url, { method: "POST", body: m.body, headers: { "svc-message-id": String(m.id) } })
      .then(async (answer) => {
        await answer.arrayBuffer();
        if (answer.ok) deletions.push(m.id);
        else toDeliver.push(m);
      }, () => toDeliver.push(m))
      .finally(() => {
        underWay--;
        scheduleFlush();
      });
  }
}

function store(url: string, body: Uint8Array<ArrayBuffer>, deliver: boolean): Promise<Key> {
  const id = tight ? ++seq : `msg_${Date.now().toString(36)}${(seq++).toString(36).padStart(8, "0")}`;
  scheduleFlush();
  return new Promise((done) => inserts.push({ id, url, body, deliver, done: () => done(id) }));
}

const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  idleTimeout: 0,
  async fetch(request) {
    const path = request.url.slice(request.url.indexOf("/", 8));
    if (!path.startsWith(PREFIX)) return new Response("not found", { status: 404 });
    const url = path.slice(PREFIX.length);
    const deliver = !request.headers.has("svc-delay");
    const id = await store(url, new Uint8Array(await request.arrayBuffer()), deliver);
    return new Response(JSON.stringify({ messageId: id, url }), { headers: { "content-type": "application/json" } });
  },
});

console.log(`floor listening on http://127.0.0.1:${server.port}`);
