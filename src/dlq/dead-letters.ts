import { DlqIdSequence } from "../core/ids.ts";
import type { MessageRecord } from "../model/message.ts";
import type { DeliveryOutcome } from "../model/outcome.ts";
import type { DlqEntry } from "./model.ts";
import type { DlqStorage } from "./storage.ts";
import type { WriteTx } from "../store/transactor.ts";

/** A message whose last attempt failed, and what a layer above may know of it (its workflow run). */
export interface DeadLetter extends Pick<DlqEntry, "workflowCreatedAt" | "failureFunctionState"> {
  message: MessageRecord;
  outcome: DeliveryOutcome;
  error: string;
  failedAt: number;
}

/** Takes in the messages whose last attempt failed: each becomes a DLQ entry with a fresh id. */
export class DeadLetters {
  constructor(
    private readonly store: DlqStorage,
    /** Where several processes share the storage, each has its own numbering (StorageEngine.dlqIds). */
    private readonly ids = new DlqIdSequence(),
  ) {}

  /** Runs inside the write `tx` that fails the message; returns the entry's DLQ id. */
  async put(tx: WriteTx, entry: DeadLetter): Promise<string> {
    const { message, outcome, error, failedAt, workflowCreatedAt, failureFunctionState } = entry;
    // A restarted manual clock can replay the same milliseconds: ids already taken are skipped.
    let dlqId = this.ids.next(failedAt);
    while (await this.store.exists(tx, dlqId)) dlqId = this.ids.next(failedAt);
    await this.store.insert(tx, {
      dlqId,
      failedAt,
      message,
      responseStatus: outcome.status,
      responseHeaders: outcome.headers,
      responseBody: outcome.body,
      error,
      workflowCreatedAt,
      failureFunctionState,
    });
    return dlqId;
  }
}
