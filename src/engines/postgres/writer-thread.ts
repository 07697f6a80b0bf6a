/**
 * The PostgreSQL writer thread: holds the connection of the transaction a tick of writes runs in.
 * The main thread hands it batches of statements, synchronously (it waits on a shared flag while
 * this thread runs them: a write inside the tick reads its rows as plain SQL) or not (the commit).
 * The statements of a batch are sent at once, pipelined on the one connection.
 */
import { SQL } from "bun";
import type { Statement, WriterReply, WriterRequest } from "./writer-protocol.ts";

declare const self: Worker;

let sql: SQL | null = null;
let port: MessagePort | null = null;
let flag: Int32Array | null = null;
type Reserved = Awaited<ReturnType<SQL["reserve"]>>;
let conn: Reserved | null = null;

function reply(message: WriterReply, sync: boolean): void {
  port!.postMessage(message);
  if (sync) {
    Atomics.store(flag!, 0, 1);
    Atomics.notify(flag!, 0);
  }
}

/**
 * Bun sends a statement without parameters as a simple query, and a simple query goes alone: only
 * once every statement before it has been answered, and none after it before its own answer. A
 * batch's BEGIN, COMMIT and savepoints would each cost a round trip of their own (two threads and
 * a PostgreSQL backend woken each time). Called as a tagged template instead, the same text is a
 * prepared statement like the others and goes out in the batch's pipeline. (Texts with a `;` stay
 * simple queries: a prepared statement is one statement.)
 */
const templates = new Map<string, TemplateStringsArray>();

function templateOf(text: string): TemplateStringsArray {
  let t = templates.get(text);
  if (!t) {
    // What a tag function receives: the strings, with the same strings as a non-enumerable `raw`.
    const strings = [text];
    Object.defineProperty(strings, "raw", { value: [text], enumerable: false });
    t = Object.freeze(strings) as unknown as TemplateStringsArray;
    // The texts without parameters are few (transaction control, savepoints): a bound for safety only.
    if (templates.size >= 256) templates.clear();
    templates.set(text, t);
  }
  return t;
}

function runOn(c: Reserved, st: Statement): Promise<unknown> {
  if (st.params.length > 0 || st.text.includes(";")) return c.unsafe(st.text, st.params as unknown[]);
  return c(templateOf(st.text));
}

/** Rows as plain objects (the driver's result array carries extra properties that need not cross threads). */
function plain(rows: unknown): Record<string, unknown>[] {
  return Array.isArray(rows) ? Array.from(rows as Record<string, unknown>[]) : [];
}

async function handle(request: WriterRequest): Promise<void> {
  const end = request.end === "commit" ? "COMMIT" : request.end === "rollback" ? "ROLLBACK" : null;
  try {
    if (request.statements.length === 0) {
      if (end && conn) {
        const c = conn;
        conn = null;
        try {
          await runOn(c, { text: end, params: [] });
        } finally {
          c.release();
        }
      }
      reply({ id: request.id, ok: true, rows: [] }, request.sync);
      return;
    }
    if (!conn) conn = await sql!.reserve();
    const c = conn;
    // Ended by this request, whatever happens to it.
    if (end) conn = null;
    // Pipelined: every statement goes out before the first answer is read, the end of the
    // transaction too (a COMMIT after a failed statement rolls back: nothing of the tick is kept).
    const statements = end ? [...request.statements, { text: end, params: [] }] : request.statements;
    const settled = await Promise.allSettled(statements.map((st) => runOn(c, st)));
    const failedAt = settled.findIndex((st) => st.status === "rejected");
    if (end) {
      // Whatever state a failure left the connection in, no transaction stays open on it.
      if (failedAt >= 0) await c.unsafe("ROLLBACK").catch(() => {});
      c.release();
    }
    if (failedAt >= 0) {
      const reason = (settled[failedAt] as PromiseRejectedResult).reason as { message?: string; errno?: string; code?: string };
      // The first failure is the cause; the statements after it fail only because the transaction is aborted.
      const at = failedAt < request.statements.length ? failedAt : -1;
      reply({ id: request.id, ok: false, failedAt: at, message: reason?.message ?? String(reason), code: reason?.errno ?? reason?.code }, request.sync);
      return;
    }
    const last = settled[request.statements.length - 1] as PromiseFulfilledResult<unknown>;
    reply({ id: request.id, ok: true, rows: plain(last.value) }, request.sync);
  } catch (error) {
    const e = error as { message?: string; errno?: string; code?: string };
    if (end && conn) {
      conn.release();
      conn = null;
    }
    reply({ id: request.id, ok: false, failedAt: -1, message: e?.message ?? String(error), code: e?.errno ?? e?.code }, request.sync);
  }
}

self.onmessage = async (event: MessageEvent) => {
  const init = event.data as { url: string; port: MessagePort; flag: SharedArrayBuffer; lockTimeoutMs: number };
  port = init.port;
  flag = new Int32Array(init.flag);
  sql = new SQL(init.url, {
    max: 1,
    connectionTimeout: 10,
    idleTimeout: 0,
    // A write waiting for a row lock blocks the main thread: it waits a bounded time, then its tick fails.
    connection: { lock_timeout: `${init.lockTimeoutMs}ms` },
  });
  // One request at a time, in order: the main thread never sends the next before this one's answer.
  let chain = Promise.resolve();
  port.onmessage = (e: MessageEvent) => {
    const request = e.data as WriterRequest;
    chain = chain.then(() => handle(request));
  };
  try {
    await sql`SELECT 1`;
    self.postMessage({ ready: true });
  } catch (error) {
    self.postMessage({ ready: false, message: (error as Error)?.message ?? String(error) });
  }
};
