import type { Account } from "../accounts/accounts.ts";
import type { Clock } from "../core/clock.ts";
import { badRequest, notFound } from "../core/errors.ts";
import type { GlobalSlotsLayout } from "../model/flow-control.ts";
import type { Transactor, WriteTx } from "../store/transactor.ts";
import type { FlowLaneStats } from "./gate.ts";
import { globalSlotsInUse } from "./global-slots.ts";
import type { FlowKeyStorage, FlowStorage, KeySettingsChange } from "./storage.ts";
import { laneKey, lanePrefix } from "./lane-key.ts";
import type { FlowLanes } from "./lanes.ts";
import type { KeyChange } from "./steering.ts";
import type { FlowKeySettings } from "./steering.ts";
import type { FlowWorkerMessage } from "./worker-messages.ts";

/** `GET /v2/flowControl` entry (docs/messaging-api.md, Flow control). Limits not set are 0. */
export interface FlowControlView {
  flowControlKey: string;
  waitListSize: number;
  parallelismMax: number;
  parallelismCount: number;
  rateMax: number;
  rateCount: number;
  /** Seconds. */
  ratePeriod: number;
  /** Unix seconds: the oldest delivery start still counted, else when resetRate or pin began the window, else now. */
  ratePeriodStart: number;
  isPaused: boolean;
  isPinnedParallelism: boolean;
  isPinnedRate: boolean;
}

export interface PinRequest {
  parallelism?: string;
  rate?: string;
  /** Seconds. */
  period?: string;
}

export interface UnpinRequest {
  parallelism?: string;
  rate?: string;
}

/** The live counters of one lane (`key`) or of every lane whose key starts with `prefix` (WorkerPool.flowStats). */
export type LiveLanes = (filter: { key: string } | { prefix: string }) => Promise<FlowLaneStats[]>;

export interface FlowControlDeps {
  /** This node's lanes: a change waits until the key's worker here applied it. */
  liveLanes: LiveLanes;
  /** Every node's lanes (clusterLanes): what the views count. */
  clusterLanes: LiveLanes;
  /** Tells every delivery worker (WorkerPool.broadcast). */
  tellWorkers: (message: FlowWorkerMessage) => void;
  store: FlowStorage;
  keys: FlowKeyStorage;
  settings: FlowKeySettings;
  lanes: FlowLanes;
  global: GlobalSlotsLayout;
  commit: Transactor;
  clock: Clock;
}

const KEY = /^[A-Za-z0-9._:-]{1,256}$/;
const MAX_LIMIT = 1_000_000;
const WEEK_SECONDS = 7 * 24 * 3600;

/**
 * Flow-control keys: their live counters (the worker that owns a key knows its in-flight count,
 * rate window and waiting jobs; the database knows the messages the dispatcher holds back) and
 * steering them. A change is stored first, then every worker is told, and the answer waits until
 * the key's worker has applied it: after a 200 to `pause`, no new delivery of the key starts.
 */
export class FlowControlService {
  constructor(private readonly deps: FlowControlDeps) {}

  /** `search`: only the keys whose name contains it, ignoring case (the hosted `?search=`). */
  async list(account: Account, search?: string): Promise<FlowControlView[]> {
    const prefix = lanePrefix(account.id);
    const live = new Map((await this.deps.clusterLanes({ prefix })).map((s) => [s.key.slice(prefix.length), s]));
    const keys = new Set([...live.keys(), ...(await this.deps.store.keys(account.id)), ...this.deps.settings.keysOf(account.id)]);
    const needle = search?.toLowerCase() ?? "";
    const matching = [...keys].filter((key) => key.toLowerCase().includes(needle));
    return Promise.all(matching.sort().map((key) => this.view(account, key, live.get(key))));
  }

  async get(account: Account, key: string): Promise<FlowControlView> {
    const [live] = await this.deps.clusterLanes({ key: laneKey(account.id, key) });
    if (!live && !(await this.deps.store.latestLimits(account.id, key)) && !this.deps.settings.get(account.id, key))
      throw notFound(`flow-control key "${key}" not found`);
    return this.view(account, key, live);
  }

  /** Messages of the key wait (never failed or dropped) until `resume`; deliveries under way finish. */
  pause(account: Account, key: string): Promise<void> {
    return this.change(account, key, { paused: true });
  }

  resume(account: Account, key: string): Promise<void> {
    return this.change(account, key, { paused: false });
  }

  /** Fixes parallelism, rate and/or period (seconds) over what messages carry; restarts the rate window. */
  pin(account: Account, key: string, request: PinRequest): Promise<void> {
    const parallelism = positive(request.parallelism, "parallelism", MAX_LIMIT);
    const rate = positive(request.rate, "rate", MAX_LIMIT);
    const period = positive(request.period, "period", WEEK_SECONDS);
    if (parallelism === undefined && rate === undefined && period === undefined)
      throw badRequest("nothing to pin: give parallelism, rate and/or period (seconds)");
    const periodMs = period === undefined ? undefined : period * 1000;
    return this.change(account, key, { parallelism, rate, periodMs }, { newWindow: true });
  }

  /** Removes the chosen pins: `parallelism=true`, `rate=true` (rate and period). */
  unpin(account: Account, key: string, request: UnpinRequest): Promise<void> {
    const parallelism = flag(request.parallelism, "parallelism");
    const rate = flag(request.rate, "rate");
    if (!parallelism && !rate) throw badRequest("nothing to unpin: give parallelism=true and/or rate=true");
    return this.change(account, key, {
      parallelism: parallelism ? null : undefined,
      rate: rate ? null : undefined,
      periodMs: rate ? null : undefined,
    });
  }

  /**
   * Another process changed these keys' settings (this one reloaded them): held messages of a key
   * that may go now are released here too. A message this process claimed before it heard of a
   * resume was held again under the old settings, and only this process can let it go.
   */
  async followRemoteChanges(changes: readonly KeyChange[]): Promise<void> {
    const { commit, clock, store, lanes } = this.deps;
    for (const { accountId, key, steering } of changes) {
      if (steering.paused) continue;
      const carried = await store.latestLimits(accountId, key);
      if (carried) await commit.run((tx) => lanes.refill(tx, accountId, key, carried, clock.now()));
    }
  }

  /** The rate count goes to 0 and a new period starts now. */
  resetRate(account: Account, key: string): Promise<void> {
    return this.change(account, key, {}, { newWindow: true });
  }

  /** The account's limit of concurrent flow-controlled deliveries, and how many run now. */
  globalParallelism(account: Account) {
    return {
      parallelismMax: account.limits.flowGlobalParallelism,
      parallelismCount: globalSlotsInUse(this.deps.global, account.id),
    };
  }

  /** Forgets every key setting and rate window of an account (test-double reset; inside its write). */
  async forgetAccount(tx: WriteTx, accountId: string): Promise<void> {
    await this.deps.settings.forgetAccount(tx, accountId);
    this.deps.tellWorkers({ type: "flow-forget", prefix: lanePrefix(accountId) });
  }

  /** Stores what the request changes of the key's settings, then steers the key's worker by the settings stored now. */
  private async change(account: Account, key: string, change: KeySettingsChange, { newWindow = false } = {}): Promise<void> {
    if (!KEY.test(key)) throw badRequest(`invalid flow-control key "${key.slice(0, 64)}": use letters, digits, ".", "_", ":" or "-"`);
    const { commit, clock, settings, keys, store, lanes, liveLanes, tellWorkers } = this.deps;
    // The limits the key's messages carry, read before the write (a publish racing it changes none of the key's room).
    const carried = await store.latestLimits(account.id, key);
    const next = await commit.run(async (tx) => {
      const now = clock.now();
      if (newWindow) await keys.clearStarts(tx, account.id, key);
      const updated = await settings.change(tx, account.id, key, newWindow ? { ...change, windowStart: now } : change);
      // Resumed, or a pin gave room: held messages go (as many as the key may have in the workers).
      if (!updated.paused && carried) await lanes.refill(tx, account.id, key, carried, now);
      return updated;
    });
    const lane = laneKey(account.id, key);
    tellWorkers({ type: "flow-steer", key: lane, steering: { paused: next.paused, pins: next.pins }, resetWindow: newWindow });
    // Messages to a worker are handled in order: once the key's worker answers, it has applied the change.
    await liveLanes({ key: lane });
  }

  private async view(account: Account, key: string, live: FlowLaneStats | undefined): Promise<FlowControlView> {
    const { settings, store, clock } = this.deps;
    const s = settings.get(account.id, key);
    const carried = await store.latestLimits(account.id, key);
    const limits = live ?? (carried ? settings.effective(account.id, carried) : { ...s?.pins, periodMs: s?.pins.periodMs ?? 1000 });
    const now = clock.now();
    const windowStart = s?.windowStart !== undefined && s.windowStart > now - limits.periodMs ? s.windowStart : now;
    return {
      flowControlKey: key,
      waitListSize: (live?.waiting ?? 0) + (await store.heldCount(account.id, key)),
      parallelismMax: limits.parallelism ?? 0,
      parallelismCount: live?.active ?? 0,
      rateMax: limits.rate ?? 0,
      rateCount: live?.rateCount ?? 0,
      ratePeriod: Math.round(limits.periodMs / 1000),
      ratePeriodStart: Math.floor((live && live.rateCount > 0 ? live.periodStart : windowStart) / 1000),
      isPaused: s?.paused ?? false,
      isPinnedParallelism: s?.pins.parallelism !== undefined,
      isPinnedRate: s?.pins.rate !== undefined || s?.pins.periodMs !== undefined,
    };
  }
}

function positive(value: string | undefined, field: string, max: number): number | undefined {
  if (value === undefined || value === "") return undefined;
  if (!/^\d{1,10}$/.test(value) || Number(value) < 1 || Number(value) > max)
    throw badRequest(`invalid ${field} "${value.slice(0, 40)}": must be an integer from 1 to ${max}`);
  return Number(value);
}

function flag(value: string | undefined, field: string): boolean {
  if (value === undefined || value === "" || value === "false") return false;
  if (value === "true") return true;
  throw badRequest(`invalid ${field} "${value.slice(0, 40)}": must be true or false`);
}
