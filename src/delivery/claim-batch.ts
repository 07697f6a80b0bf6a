import type { MessageLifecycle } from "../messages/lifecycle.ts";
import type { MessageStorage } from "../messages/storage.ts";
import type { MessageRecord } from "../model/message.ts";
import type { WriteTx } from "../store/transactor.ts";
import type { DispatchGate } from "./gate.ts";

/** What one batch of a claim pass claimed, and how many due messages it saw. */
export interface ClaimBatch {
  claimed: MessageRecord[];
  seen: number;
}

export interface ClaimBatchDeps {
  store: MessageStorage;
  lifecycle: MessageLifecycle;
  gate: DispatchGate;
}

/**
 * Claims up to `limit` messages due at `nowMs`, in a savepoint of the write `tx`: those the gate
 * admits are claimed (their `claimed` event emitted), the others it has set aside.
 */
export function claimBatch(deps: ClaimBatchDeps, tx: WriteTx, nowMs: number, limit: number): Promise<ClaimBatch> {
  const { store, lifecycle, gate } = deps;
  return tx.nested(async (tx) => {
    const due = await store.due(tx, nowMs, limit);
    const claimed: MessageRecord[] = [];
    const ids: string[] = [];
    for (const m of due) {
      if (!(await gate.admit(tx, m, nowMs))) continue;
      ids.push(m.id);
      await lifecycle.claimed(tx, m, nowMs);
      claimed.push(m);
    }
    // One statement for the batch (nothing in between reads the claimed rows).
    await store.claimDue(tx, ids);
    return { claimed, seen: due.length };
  });
}
