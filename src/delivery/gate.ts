import type { Logger } from "../core/log.ts";
import type { MessageRecord } from "../model/message.ts";
import type { Transactor, WriteTx } from "../store/transactor.ts";

/**
 * A check on every claimed message before it goes to a worker (flow control caps what one key may
 * have in the workers at once, so a key with a huge backlog cannot take all of the dispatcher's
 * room). Every call runs inside a write (`tx`): the dispatcher's claim, the outcome recorder's
 * batch, a cancel's write, or a write of its own for an attempt given up outside one.
 */
export interface DispatchGate {
  /** True: dispatch it now. False: the gate has set the message aside (it is not claimed). */
  admit(tx: WriteTx, m: MessageRecord, nowMs: number): Promise<boolean>;
  /** An admitted message's attempt is over (recorded, or disowned by a cancel). */
  released(tx: WriteTx, m: MessageRecord, nowMs: number): Promise<void>;
  /** At start: what the gate held when the server last stopped is due again; returns how many. */
  recover(tx: WriteTx, nowMs: number): Promise<number>;
}

/**
 * Attempts given up outside a write (after the commit that disowned them, or by a claim that was
 * not stored): the gate hears of them in a write of their own.
 */
export function releaseInOwnWrite(
  deps: { commit: Transactor; gate: DispatchGate; log: Logger },
  messages: MessageRecord[],
  nowMs: number,
): void {
  if (messages.length === 0) return;
  deps.commit
    .run(async (tx) => {
      for (const m of messages) await deps.gate.released(tx, m, nowMs);
    })
    .catch((error) => {
      deps.log.error("releasing flow-control room failed", { error: String((error as Error)?.message ?? error) });
    });
}
