import { onFinished, type MessageListener } from "../model/events.ts";
import type { ScheduleStorage } from "./storage.ts";

/**
 * Keeps `lastScheduleStates` true: when a message of a schedule's last trigger ends, its entry
 * becomes SUCCESS (delivered) or FAIL (failed or cancelled). Runs in the write that ends it.
 */
export function scheduleStatesListener(store: ScheduleStorage): MessageListener {
  return onFinished((tx, m, how) => {
    // Callbacks of a scheduled message carry its schedule id too; only the message itself counts.
    if (!m.scheduleId || m.kind !== "message") return;
    return store.setMessageState(tx, m.accountId, m.scheduleId, m.id, how === "delivered" ? "SUCCESS" : "FAIL");
  });
}
