import type { FlowSteering, GlobalSlotsLayout } from "../model/flow-control.ts";

/** What the main thread tells the delivery workers about flow control, besides the jobs themselves. */
export type FlowWorkerMessage =
  /** Every worker, before its first job: the counters of the accounts' global flow-control limits. */
  | { type: "flow-init"; global: GlobalSlotsLayout }
  /**
   * What the API set for a flow-control lane (`key`, account-prefixed): pause, pins; `starts`: the
   * rate window a restart left; `resetWindow`: a new rate window starts now.
   */
  | { type: "flow-steer"; key: string; steering: FlowSteering; starts?: number[]; resetWindow?: boolean }
  /** An account was reset: forget what the API set for its lanes, and their rate windows. */
  | { type: "flow-forget"; prefix: string };
