import type { MessageRecord } from "../../src/model/message.ts";

/**
 * A stored message as the publish path builds it (CREATED, three retries, its id as its body), for
 * tests that drive the stores directly; `fields` names what the test is about.
 */
type Named = Pick<MessageRecord, "id" | "accountId" | "createdAt" | "dispatchAt">;
export function messageRecord(fields: Named & Partial<MessageRecord>): MessageRecord {
  return {
    kind: "message",
    state: "CREATED",
    notBefore: fields.dispatchAt ?? fields.createdAt,
    retried: 0,
    maxRetries: 3,
    url: "http://127.0.0.1:1/x",
    method: "POST",
    headers: [],
    body: new TextEncoder().encode(fields.id),
    timeoutMs: 10_000,
    ...fields,
  };
}
