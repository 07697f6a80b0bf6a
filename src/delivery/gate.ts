import type { MessageRecord } from "../model/message.ts";

/**
 * A check on every claimed message before it goes to a worker (flow control caps what one key may
 * have in the workers at once, so a key with a huge backlog cannot take all of the dispatcher's
 * room). Every call runs inside the dispatcher's or the outcome recorder's write.
 */
export interface DispatchGate {
  /** True: dispatch it now. False: the gate has set the message aside (it is not claimed). */
  admit(m: MessageRecord, nowMs: number): boolean;
  /** An admitted message's attempt is over (recorded, or disowned by a cancel). */
  released(m: MessageRecord, nowMs: number): void;
  /** At start: what the gate held when the server last stopped is due again; returns how many. */
  recover(nowMs: number): number;
}

