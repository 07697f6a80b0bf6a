import type { Account } from "../accounts/accounts.ts";
import type { AppContext } from "../context/app-context.ts";
import { badRequest, notFound, quotaExceeded } from "../core/errors.ts";
import { newScheduleId } from "../core/ids.ts";
import { parseDestination } from "../messages/destination.ts";
import { checkName } from "../messages/options.ts";
import type { PublishService } from "../messages/publish.ts";
import type { QueueService } from "../queues/service.ts";
import type { WriteTx } from "../store/transactor.ts";
import { toHeaders } from "../util/header-pairs.ts";
import { checkCron, nextRunAfter } from "./cron.ts";
import { replayableHeaders } from "./replay.ts";
import type { Scheduler } from "./scheduler.ts";
import { settingsOf } from "./settings.ts";
import type { ScheduleRow, ScheduleStorage } from "./storage.ts";
import { scheduleView } from "./view.ts";

export interface ScheduleRequest {
  /** What follows `/v2/schedules/`: the destination URL (with its query) or a URL Group name. */
  destination: string;
  headers: Headers;
  body: Uint8Array;
  callerIp?: string;
}

/** A validated schedule, not yet stored. */
export interface ScheduleDraft {
  account: Account;
  row: Omit<ScheduleRow, "revision" | "created_at" | "paused" | "last_schedule_time" | "next_schedule_time" | "last_states">;
}

/** Schedules: created from a publish request plus a cron, stored, and triggered by the Scheduler. */
export class ScheduleService {
  constructor(
    private readonly ctx: AppContext,
    private readonly store: ScheduleStorage,
    private readonly publisher: PublishService,
    private readonly queues: QueueService,
    private readonly scheduler: Scheduler,
  ) {}

  /**
   * Validates everything a trigger will need, exactly as a publish would (400, 404 for an unknown
   * URL Group, 412 for a queue over the plan), so that triggers do not fail later. `tx`: the write
   * it runs in (a config fixture's), whose queues count; null outside writes.
   */
  async draft(tx: WriteTx | null, account: Account, req: ScheduleRequest): Promise<ScheduleDraft> {
    const { destination, query } = parseDestination(req.destination, this.ctx.dialect);
    const setting = (suffix: string) => {
      const name = `${this.ctx.dialect.prefix}-${suffix}`;
      const value = req.headers.get(name) ?? query.get(name.toLowerCase()) ?? undefined;
      query.delete(name.toLowerCase());
      return { name, value: value?.trim() };
    };
    const cron = setting("Cron");
    if (!cron.value) throw badRequest(`missing ${cron.name} header: a cron expression is required`);
    checkCron(cron.value, cron.name);
    const given = setting("Schedule-Id");
    const id = given.value ? checkName(given.value, given.name) : newScheduleId();
    query.delete(this.ctx.dialect.tokenQueryParam);

    const headers = replayableHeaders(req.headers, this.ctx.dialect);
    const input = {
      account,
      destination,
      headers: toHeaders(headers),
      query,
      body: req.body,
      callerIp: req.callerIp,
      scheduleId: id,
    };
    const { options } = await this.publisher.prepare(tx, input);
    if (options.queueName) await this.queues.checkCanUse(tx, account, options.queueName);
    return {
      account,
      row: {
        account_id: account.id,
        id,
        cron: cron.value,
        destination_kind: destination.kind,
        destination: destination.kind === "url" ? destination.url : destination.name,
        headers: JSON.stringify(headers),
        query: query.toString(),
        body: req.body,
        caller_ip: req.callerIp ?? null,
        settings: JSON.stringify(settingsOf(options)),
      },
    };
  }

  /** Stores a draft (creating, or replacing the schedule of the same id), inside the write `tx`. */
  async save(tx: WriteTx, draft: ScheduleDraft, nowMs: number, paused = false): Promise<ScheduleRow> {
    const { account, row } = draft;
    const existing = await this.store.get(tx, account.id, row.id);
    if (!existing && (await this.store.count(tx, account.id)) >= account.limits.maxSchedules)
      throw quotaExceeded(`too many schedules: the plan allows ${account.limits.maxSchedules}`);
    const stored: ScheduleRow = {
      ...row,
      revision: (existing?.revision ?? 0) + 1,
      created_at: nowMs,
      paused: paused ? 1 : 0,
      last_schedule_time: null,
      next_schedule_time: nextRunAfter(row.cron, nowMs),
      last_states: "{}",
    };
    // The revision is the stored one's plus one, whichever node replaced the schedule last.
    return this.store.upsert(tx, stored);
  }

  async create(account: Account, req: ScheduleRequest): Promise<{ scheduleId: string }> {
    const draft = await this.draft(null, account, req);
    const stored = await this.ctx.commit.run((tx) => this.save(tx, draft, this.ctx.clock.now()));
    this.scheduler.arm(stored, stored.next_schedule_time);
    return { scheduleId: stored.id };
  }

  async list(account: Account) {
    return (await this.store.readList(account.id)).map(scheduleView);
  }

  async get(account: Account, id: string) {
    const row = await this.store.read(account.id, id);
    if (!row) throw notFound(`schedule "${id}" not found`);
    return scheduleView(row);
  }

  /** Idempotent: a schedule that does not exist is not an error (clients delete before they create). */
  async delete(account: Account, id: string): Promise<void> {
    const deleted = await this.ctx.commit.run((tx) => this.store.delete(tx, account.id, id));
    if (deleted) this.scheduler.disarm(account.id, id);
  }

  /** A paused schedule skips its triggers; its timer keeps running so nextScheduleTime keeps moving. */
  async setPaused(account: Account, id: string, paused: boolean): Promise<void> {
    const found = await this.ctx.commit.run((tx) => this.store.setPaused(tx, account.id, id, paused));
    if (!found) throw notFound(`schedule "${id}" not found`);
  }

  /** Forgets every schedule of an account (inside a transaction). */
  async deleteAccount(tx: WriteTx, accountId: string): Promise<void> {
    await this.store.deleteAccount(tx, accountId);
    this.scheduler.disarmAccount(accountId);
  }
}
