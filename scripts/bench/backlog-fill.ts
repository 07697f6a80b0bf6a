/**
 * Fills a fresh svcd database with delayed messages before the server starts. One message goes
 * through the same lifecycle code a publish uses (message row + its CREATED log entry); SQLite
 * then copies both rows a million times inside single INSERT … SELECT statements, changing only
 * the id and the due time, so the rows are what a publish stores whatever the schema grows into.
 * A million HTTP publishes (or a million JS calls) would not fit the time budget. While filling,
 * nothing needs durability: no journal, no sync; the file is back in WAL mode for the server.
 */
import { GroupCommit } from "../../src/engines/sqlite/group-commit.ts";
import { statSync } from "node:fs";
import { DEFAULT_ACCOUNT } from "../../src/config/config.ts";
import { newMessageId } from "../../src/core/ids.ts";
import { DeadLetters } from "../../src/dlq/dead-letters.ts";
import { SqliteDlqStore } from "../../src/engines/sqlite/dlq.ts";
import { eventLogListener } from "../../src/logs/event-log.ts";
import { SqliteEventStore } from "../../src/engines/sqlite/events.ts";
import { MessageLifecycle } from "../../src/messages/lifecycle.ts";
import { MessageEvents } from "../../src/model/events.ts";
import { silentLogger } from "../../src/core/log.ts";
import type { MessageRecord } from "../../src/model/message.ts";
import { SqliteMessageStore } from "../../src/engines/sqlite/messages.ts";
import { SharedBodies } from "../../src/engines/sqlite/bodies.ts";
import { migrate, openDatabase } from "../../src/engines/sqlite/db.ts";
import { MIGRATIONS } from "../../src/engines/migrations.ts";
import { BODY } from "./payload.ts";

const DAY_MS = 24 * 3600 * 1000;
const CHUNK = 100_000;

export interface FillResult {
  messages: number;
  seconds: number;
  /** Database file size after a full checkpoint, divided by the messages. */
  bytesPerMessage: number;
  /** Split by table (with its indexes) when SQLite's dbstat table is available. */
  tables?: Array<{ name: string; bytes: number }>;
}

const columnsOf = (db: ReturnType<typeof openDatabase>, table: string) =>
  db.query<{ name: string }, []>(`PRAGMA table_info(${table})`).all().map((c) => c.name);

export async function fillBacklog(dbPath: string, messages: number, destination: string): Promise<FillResult> {
  const t0 = performance.now();
  const db = openDatabase(dbPath);
  migrate(db, MIGRATIONS);
  db.run("PRAGMA journal_mode = OFF");
  db.run("PRAGMA synchronous = OFF");
  db.run("PRAGMA cache_size = -262144");
  const bodies = new SharedBodies(db);
  const lifecycle = new MessageLifecycle({
    store: new SqliteMessageStore(db, bodies),
    events: new MessageEvents(silentLogger, [eventLogListener(new SqliteEventStore(db, bodies))]),
    admit: async () => {},
    deadLetters: new DeadLetters(new SqliteDlqStore(db)),
  });
  const now = Date.now();
  const due = now + DAY_MS;
  const template: MessageRecord = {
    id: newMessageId(),
    accountId: DEFAULT_ACCOUNT.userId,
    kind: "message",
    state: "CREATED",
    dispatchAt: due,
    notBefore: due,
    createdAt: now,
    retried: 0,
    maxRetries: 3,
    url: destination,
    method: "POST",
    headers: [["Content-Type", "application/json"]],
    body: BODY,
    timeoutMs: 2 * 3600 * 1000,
  };
  // The template is stored in one write of a group commit of its own, as a server stores it.
  await new GroupCommit(db).run((tx) => lifecycle.accept(tx, template, now));

  // Copies keep the template's time prefix and get a sequence number: unique, in id order.
  const idExpr = "substr($template, 1, 12) || printf('%018d', s.i)";
  const copy = (table: string, key: string, replace: Record<string, string>) => {
    const cols = columnsOf(db, table).filter((c) => c !== "seq");
    const exprs = cols.map((c) => replace[c] ?? `t.${c}`);
    return db.prepare(
      `WITH RECURSIVE s(i) AS (SELECT $from UNION ALL SELECT i + 1 FROM s WHERE i < $to)
       INSERT INTO ${table} (${cols.join(", ")}) SELECT ${exprs.join(", ")} FROM s, ${table} t WHERE t.${key} = $template`,
    );
  };
  // Each copy gets a body of its own, as a publish stores it (engines/sqlite/bodies.ts): its row id is the
  // template's plus the copy's sequence number.
  const bodyOf = db.query<{ shared_body: number | null }, [string]>("SELECT shared_body FROM messages WHERE id = ?").get(template.id)!.shared_body;
  const sharedBody: Record<string, string> = bodyOf === null ? {} : { shared_body: "$body + s.i" };
  const copyBodies = db.prepare(
    `WITH RECURSIVE s(i) AS (SELECT $from UNION ALL SELECT i + 1 FROM s WHERE i < $to)
     INSERT INTO message_bodies (body_id, bytes) SELECT $body + s.i, b.bytes FROM s, message_bodies b WHERE b.body_id = $body`,
  );
  const copyMessages = copy("messages", "id", { id: idExpr, dispatch_at: "$due + s.i", not_before: "$due + s.i", ...sharedBody });
  const copyEvents = copy("events", "message_id", { message_id: idExpr, ...sharedBody });
  for (let from = 1; from < messages; from += CHUNK) {
    const to = Math.min(messages - 1, from + CHUNK - 1);
    db.transaction(() => {
      if (bodyOf !== null) copyBodies.run({ from, to, body: bodyOf } as never);
      copyMessages.run({ from, to, template: template.id, due, ...(bodyOf === null ? {} : { body: bodyOf }) } as never);
      copyEvents.run({ from, to, template: template.id, ...(bodyOf === null ? {} : { body: bodyOf }) } as never);
    })();
  }
  db.run("PRAGMA journal_mode = WAL");
  let tables: FillResult["tables"];
  // dbstat reads every page: affordable up to a few hundred thousand messages only.
  if (messages <= 200_000) {
    try {
      const rows = db
        .query<{ tbl: string; bytes: number }, []>(
          "SELECT COALESCE(m.tbl_name, s.name) AS tbl, SUM(s.pgsize) AS bytes FROM dbstat s LEFT JOIN sqlite_master m ON m.name = s.name GROUP BY s.name",
        )
        .all();
      const byTable = new Map<string, number>();
      for (const r of rows) byTable.set(r.tbl, (byTable.get(r.tbl) ?? 0) + r.bytes);
      tables = [...byTable.entries()].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes).slice(0, 3);
    } catch {
      tables = undefined; // dbstat not compiled in
    }
  }
  db.close();
  const size = statSync(dbPath).size;
  return { messages, seconds: (performance.now() - t0) / 1000, bytesPerMessage: size / messages, tables };
}

/**
 * Runs the fill in its own process, so its connection (and every statement the stores prepared)
 * is surely closed when the server opens the file.
 */
export async function fillBacklogInProcess(dbPath: string, messages: number, destination: string): Promise<FillResult> {
  const proc = Bun.spawn([process.execPath, import.meta.path, dbPath, String(messages), destination], {
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`backlog fill failed (exit ${code}): ${err}`);
  return JSON.parse(out) as FillResult;
}

if (import.meta.main) {
  const [dbPath, messages, destination] = process.argv.slice(2);
  process.stdout.write(JSON.stringify(await fillBacklog(dbPath!, Number(messages), destination!)));
}
