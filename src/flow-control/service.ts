import type { Account } from "../accounts/accounts.ts";
import type { Clock } from "../core/clock.ts";
import { notFound } from "../core/errors.ts";
import type { FlowLaneStats } from "./gate.ts";
import { laneKey, lanePrefix } from "./lane-key.ts";
import type { FlowStore } from "./store.ts";

/** `GET /v2/flowControl` entry. Limits not set are 0. */
export interface FlowControlView {
  flowControlKey: string;
  waitListSize: number;
  parallelismMax: number;
  parallelismCount: number;
  rateMax: number;
  rateCount: number;
  /** Seconds. */
  ratePeriod: number;
  /** Unix ms: the oldest delivery start still counted in the sliding period (now when none). */
  ratePeriodStart: number;
  isPaused: boolean;
}

/**
 * Live flow-control counters: the worker that owns a key knows its in-flight count, rate window and
 * waiting jobs; the database knows the messages the dispatcher holds back and the keys of messages
 * that are not due yet (delayed, or waiting for a retry).
 */
/** The live counters of one lane (`key`) or of every lane whose key starts with `prefix` (WorkerPool.flowStats). */
export type LiveLanes = (filter: { key: string } | { prefix: string }) => Promise<FlowLaneStats[]>;

export class FlowControlService {
  constructor(
    private readonly liveLanes: LiveLanes,
    private readonly store: FlowStore,
    private readonly clock: Clock,
  ) {}

  async list(account: Account): Promise<FlowControlView[]> {
    const prefix = lanePrefix(account.id);
    const live = new Map((await this.liveLanes({ prefix })).map((s) => [s.key.slice(prefix.length), s]));
    const keys = new Set([...live.keys(), ...this.store.keys(account.id)]);
    return [...keys].sort().map((key) => this.view(account, key, live.get(key)));
  }

  async get(account: Account, key: string): Promise<FlowControlView> {
    const [live] = await this.liveLanes({ key: laneKey(account.id, key) });
    if (!live && !this.store.latestLimits(account.id, key)) throw notFound(`flow-control key "${key}" not found`);
    return this.view(account, key, live);
  }

  private view(account: Account, key: string, live: FlowLaneStats | undefined): FlowControlView {
    const limits = live ?? this.store.latestLimits(account.id, key);
    return {
      flowControlKey: key,
      waitListSize: (live?.waiting ?? 0) + this.store.heldCount(account.id, key),
      parallelismMax: limits?.parallelism ?? 0,
      parallelismCount: live?.active ?? 0,
      rateMax: limits?.rate ?? 0,
      rateCount: live?.rateCount ?? 0,
      ratePeriod: Math.round((limits?.periodMs ?? 1000) / 1000),
      ratePeriodStart: live?.periodStart ?? this.clock.now(),
      isPaused: false,
    };
  }
}
