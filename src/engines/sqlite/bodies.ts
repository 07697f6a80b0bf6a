import type { Database } from "bun:sqlite";

/**
 * Bodies shorter than this stay inline in each row that needs them: a row of their own would cost
 * more than the copy.
 */
const SHARED_FROM_BYTES = 256;

/**
 * A message's body stored once in the SQLite engine. The live message's row and its CREATED log
 * entry both refer to one `message_bodies` row (their `shared_body` column, their own `body`
 * empty) instead of each carrying a copy: a publish writes the body once, and the message row,
 * which every claim, retry and ending rewrites, stays a few hundred bytes.
 *
 * The body has two holders: the message row until the message ends, the log entry until
 * retention prunes it. Whichever goes last drops the body: the log's pruning drops the bodies of
 * entries whose message is gone and marks the others' rows (`body_alone`), so that the message's
 * deletion drops it then (a trigger, messages/004-drop-alone-body).
 */
export class SharedBodies {
  /** Bodies stored by the write under way, so the new message's CREATED entry finds its row. */
  private readonly stored = new WeakMap<Uint8Array, { messageId: string; bodyId: number }>();
  private readonly insertStmt;
  private readonly readStmt;

  constructor(db: Database) {
    this.insertStmt = db.prepare<never, [Uint8Array]>("INSERT INTO message_bodies (bytes) VALUES (?)");
    this.readStmt = db.prepare<{ bytes: Uint8Array }, [number]>("SELECT bytes FROM message_bodies WHERE body_id = ?");
  }

  /** Stores a new message's body; null when it is small enough to stay inline. */
  share(messageId: string, body: Uint8Array): number | null {
    if (body.byteLength < SHARED_FROM_BYTES) return null;
    const bodyId = Number(this.insertStmt.run(body).lastInsertRowid);
    this.stored.set(body, { messageId, bodyId });
    return bodyId;
  }

  /** The row holding this message's body, when `share` stored it (for its CREATED entry). */
  sharedBy(messageId: string, body: Uint8Array): number | null {
    const stored = this.stored.get(body);
    return stored?.messageId === messageId ? stored.bodyId : null;
  }

  read(bodyId: number): Uint8Array {
    const row = this.readStmt.get(bodyId);
    // A missing row would be a bug in the bookkeeping above: fail loudly rather than deliver "".
    if (!row) throw new Error(`message body ${bodyId} is missing`);
    return row.bytes;
  }
}
