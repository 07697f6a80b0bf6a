import type { Logger } from "../core/log.ts";
import type { JobFault } from "../delivery/worker-protocol.ts";
import type { MessageRecord } from "../model/message.ts";
import type { DeliveryFaultKind } from "./model.ts";
import type { FaultRules } from "./rules.ts";

/**
 * The dispatcher's question for each attempt it hands to a worker: which fault, if any, the
 * account's rules inject. The answer travels with the job; the worker thread keeps no rules.
 */
export function deliveryFaults(rules: FaultRules, log: Logger): (m: MessageRecord) => JobFault | undefined {
  return (m) => {
    if (rules.empty) return undefined;
    const rule = rules.forDelivery(m.accountId, { url: m.url, labels: m.labels, flowControlKey: m.flow?.key, queue: m.queueName });
    if (!rule) return undefined;
    const attempt = m.retried + 1;
    log.info("injected fault", { fault: rule.kind, faultRule: rule.id, account: m.accountId, messageId: m.id, attempt });
    return { kind: rule.kind as DeliveryFaultKind, rule: rule.id, delayMs: rule.delayMs };
  };
}
