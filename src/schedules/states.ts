import type { FinishedHow, MessageHooks } from "../messages/lifecycle.ts";
import type { MessageRecord } from "../model/message.ts";
import type { ScheduleStore } from "./store.ts";

/**
 * Keeps `lastScheduleStates` true: when a message of a schedule's last trigger ends, its entry
 * becomes SUCCESS (delivered) or FAIL (failed or cancelled). Runs in the transaction that ends it.
 */
export class ScheduleStates implements MessageHooks {
  constructor(private readonly store: ScheduleStore) {}

  finished(m: MessageRecord, how: FinishedHow): void {
    // Callbacks of a scheduled message carry its schedule id too; only the message itself counts.
    if (!m.scheduleId || m.kind !== "message") return;
    this.store.setMessageState(m.accountId, m.scheduleId, m.id, how === "delivered" ? "SUCCESS" : "FAIL");
  }
}
