import type { SQL } from "bun";
import type { Logger } from "../../core/log.ts";
import type { CachedTable } from "./cached-table.ts";
import { ANSWER, ASK, type ClusterQuestions } from "./questions.ts";
import { num } from "./values.ts";

/** What another node made due (its nodeId, then the earliest time). */
export const DUE = "svcd_due";
/** Which tables another node changed (its nodeId, then the table names). */
export const CONFIG = "svcd_config";
/** A node's notification to itself, which shows that its LISTEN connection still hears. */
const PING = "svcd_ping";

/** How soon a reload that failed (PostgreSQL unreachable meanwhile) is tried again. */
const RETRY_MS = 1000;

/** What notifications need of a table kept in memory, whatever its rows. */
type AnyTable = Pick<CachedTable<Record<string, unknown>>, "table" | "reload">;

interface Options {
  sql: SQL;
  nodeId: string;
  log: Logger;
  /** The tables kept in memory, reloaded when another node changed them. */
  tables: AnyTable[];
  /** Tables not kept in memory whose watchers are told all the same after a reconnect. */
  uncached: string[];
  /** Another node made messages due (at `atMs`, or now when notifications may have been missed). */
  onDue: (atMs?: number) => void;
  /** A ping of this node's not heard for this long: the LISTEN connection is taken for deaf. */
  deafAfterMs: number;
  /** The other nodes' questions to this one, and their answers to this one's. */
  questions: ClusterQuestions;
}

/**
 * The other nodes' notifications. PostgreSQL keeps no notification for a session that is not
 * listening: those sent while the LISTEN connection was down (Bun.sql reconnects it and listens
 * again) are lost. So every (re)subscription is followed by a reload of every table kept in
 * memory, its watchers told, and a wake of the dispatcher: the node then holds what was
 * committed before the LISTEN, and hears of everything committed after it.
 *
 * A connection can also go deaf without Bun.sql noticing (a peer or a firewall that drops it
 * silently). So at each heartbeat the node notifies itself; a ping not heard within
 * `deafAfterMs` closes the LISTEN connection and subscribes again, which reloads as above.
 */
export class Notifications {
  private readonly watchers = new Map<string, Array<() => void>>();
  private readonly byName: Map<string, AnyTable>;
  private readonly running = new Map<string, Promise<void>>();
  /** Tables notified again while their reload ran: the reload may have read before that commit. */
  private readonly again = new Set<string>();
  private subscriptions: SQL.ListenSubscription[] = [];
  /** Subscriptions acknowledged on the CONFIG channel: more than one means a reconnect. */
  private listens = 0;
  private started = false;
  private stopped = false;
  private pings = 0;
  /** Pings sent and not heard yet: their number, and when they went. */
  private unheard = new Map<number, number>();
  private resubscribing: Promise<void> | null = null;

  constructor(private readonly o: Options) {
    this.byName = new Map(o.tables.map((t) => [t.table, t]));
  }

  watch(table: string, fn: () => void): void {
    (this.watchers.get(table) ?? this.watchers.set(table, []).get(table)!).push(fn);
  }

  /** Listens on the channels, then loads every table: nothing committed meanwhile is missed. */
  async start(): Promise<void> {
    await this.subscribe();
    await Promise.all([...this.byName.keys()].map((t) => this.reload(t)));
    this.started = true;
  }

  private async subscribe(): Promise<void> {
    const { sql, nodeId } = this.o;
    const settled = await Promise.allSettled([
      sql.listen(DUE, (payload) => {
        const [from, at] = payload.split("|");
        if (from !== nodeId) this.o.onDue(num(at));
      }),
      sql.listen(
        CONFIG,
        (payload) => {
          const [from, tables] = payload.split("|");
          if (from !== nodeId) for (const table of tables!.split(",")) this.follow(table);
        },
        () => this.listened(),
      ),
      sql.listen(ASK, (payload) => this.o.questions.heardQuestion(payload)),
      sql.listen(ANSWER, (payload) => this.o.questions.heardAnswer(payload)),
      sql.listen(
        PING,
        (payload) => {
          const [from, n] = payload.split("|");
          if (from !== nodeId) return;
          for (const sent of this.unheard.keys()) if (sent <= Number(n)) this.unheard.delete(sent);
        },
        // Pings sent before this channel listened again were not heard, and prove nothing.
        () => this.unheard.clear(),
      ),
    ]);
    const made = settled.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    const failed = settled.find((r) => r.status === "rejected");
    if (!failed && !this.stopped) return void (this.subscriptions = made);
    await Promise.all(made.map((s) => s.unlisten().catch(() => {})));
    if (failed) throw failed.reason;
  }

  /**
   * At each heartbeat: takes the LISTEN connection for deaf when a ping went unheard for longer
   * than `deafAfterMs` (and listens again on a new one), then pings anew.
   */
  async check(): Promise<void> {
    if (this.stopped || this.resubscribing) return;
    const oldest = Math.min(...this.unheard.values());
    if (performance.now() - oldest > this.o.deafAfterMs) {
      const unheardMs = Math.round(performance.now() - oldest);
      this.o.log.warn("this node no longer hears its own notifications: listening again", { unheardMs });
      this.unheard.clear();
      this.resubscribing = this.resubscribe().finally(() => (this.resubscribing = null));
      return;
    }
    const n = ++this.pings;
    // Counted before it is sent: it may be heard before the NOTIFY is answered.
    this.unheard.set(n, performance.now());
    await this.o.sql.notify(PING, `${this.o.nodeId}|${n}`).catch((error) => {
      this.unheard.delete(n);
      throw error;
    });
  }

  /** Closing the last registration closes the connection; the next `listen` opens another. */
  private async resubscribe(): Promise<void> {
    await Promise.all(this.subscriptions.map((s) => s.unlisten().catch(() => {})));
    this.subscriptions = [];
    try {
      await this.subscribe();
    } catch (error) {
      // PostgreSQL is out of reach meanwhile: tried again at a later heartbeat.
      this.o.log.warn("listening again failed", { error: String(error) });
      this.unheard.set(0, Number.NEGATIVE_INFINITY);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.subscriptions.map((s) => s.unlisten().catch(() => {})));
  }

  private listened(): void {
    if (this.listens++ === 0) return;
    this.o.log.info("listening for the other nodes again: reloading the tables kept in memory");
    for (const table of [...this.byName.keys(), ...this.o.uncached]) this.follow(table);
    this.o.onDue();
  }

  /** A reload nobody awaits (a failure before the start is the start's to report). */
  private follow(table: string): void {
    this.reload(table).catch(() => {});
  }

  /** Reloads `table` (once more after the running reload, if one runs), then tells its watchers. */
  reload(table: string): Promise<void> {
    const t = this.byName.get(table);
    // A table not kept in memory: its watchers read what they need themselves.
    if (!t) {
      this.tell(table);
      return Promise.resolve();
    }
    const running = this.running.get(table);
    if (running) {
      this.again.add(table);
      return running;
    }
    const work = (async () => {
      do {
        this.again.delete(table);
        try {
          await t.reload();
        } catch (error) {
          if (!this.started) throw error;
          // Kept stale otherwise until the next change of that table: tried again shortly.
          this.o.log.warn("reloading a table another node changed failed", { table, error: String(error) });
          if (!this.stopped) this.again.add(table);
          await Bun.sleep(RETRY_MS);
        }
      } while (this.again.has(table) && !this.stopped);
      this.tell(table);
    })().finally(() => this.running.delete(table));
    this.running.set(table, work);
    return work;
  }

  /** Tells the watchers of `table` that its rows changed. */
  tell(table: string): void {
    this.watchers.get(table)?.forEach((fn) => fn());
  }
}
