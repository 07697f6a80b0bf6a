import type { Clock } from "../core/clock.ts";
import type { GlobalSlotsLayout } from "../model/flow-control.ts";
import type { FlowKeyStorage } from "./storage.ts";
import { laneKey } from "./lane-key.ts";
import type { FlowKeySettings } from "./steering.ts";
import type { FlowWorkerMessage } from "./worker-messages.ts";

/**
 * What a new delivery worker (a replacement for a crashed one too) is told before its first job:
 * the accounts' global counters, every key's settings, and the rate windows still running.
 */
export function flowWorkerGreeting(deps: {
  settings: FlowKeySettings;
  keys: FlowKeyStorage;
  global: GlobalSlotsLayout;
  clock: Clock;
}): FlowWorkerMessage[] {
  const messages: FlowWorkerMessage[] = [{ type: "flow-init", global: deps.global }];
  const live = deps.keys.liveStarts(deps.clock.now());
  const starts = new Map(live.map((e) => [laneKey(e.accountId, e.key), e.starts]));
  for (const { lane, steering } of deps.settings.all()) {
    messages.push({ type: "flow-steer", key: lane, steering, starts: starts.get(lane) });
    starts.delete(lane);
  }
  for (const [lane, laneStarts] of starts)
    messages.push({ type: "flow-steer", key: lane, steering: { paused: false, pins: {} }, starts: laneStarts });
  return messages;
}
