/** Limits fixed through the API (`pin`); they override what messages of the key carry. */
export interface FlowPins {
  parallelism?: number;
  rate?: number;
  periodMs?: number;
}

/** What the API set for one flow-control key, as the delivery worker that owns the key needs it. */
export interface FlowSteering {
  paused: boolean;
  pins: FlowPins;
}

/**
 * Each account's limit of concurrent flow-controlled deliveries, counted across every delivery
 * worker in one SharedArrayBuffer of Int32 counters: per account, the total (index `account`) and
 * each worker's share (index `(1 + worker) * accounts + account`), so a replaced worker can give
 * back what its crashed predecessor held.
 */
export interface GlobalSlotsLayout {
  buffer: SharedArrayBuffer;
  accounts: Record<string, { index: number; max: number }>;
}
