import { toBase64 } from "../util/base64.ts";
import type { MessageRecord, WorkflowTag } from "../model/message.ts";
import { bytesOf, encodeRawSteps, textOf } from "./raw-steps.ts";
import type { RunStorage } from "./storage.ts";

/**
 * What a run's message carries when it is delivered. A step delivery's body is the run's list up
 * to and including that message (the SDK replays the run from it); when that list is larger than
 * the account may send, the body is empty and the SDK fetches the list itself (its lazy fetch).
 * The failure function's call carries the run's initial payload as `sourceBody`, whichever step
 * failed, and names the run. Read after the claim commits (an engine may answer later).
 */
export class WorkflowDeliveries {
  constructor(
    private readonly runs: RunStorage,
    private readonly maxBodyBytes: (accountId: string) => number,
  ) {}

  /**
   * The body to deliver instead of the stored one, or undefined to deliver the stored one. A
   * message of no run is answered at once, without a promise: every delivery asks.
   */
  readonly bodyFor = (m: MessageRecord): Promise<Uint8Array | undefined> | undefined => {
    const tag = m.workflow;
    if (tag?.callType === "step") return this.stepBody(m, tag);
    if (tag?.callType === "failureCall") return this.failureBody(m, tag);
    return undefined;
  };

  private async stepBody(m: MessageRecord, tag: WorkflowTag): Promise<Uint8Array | undefined> {
    const entry = await this.runs.readStepOfMessage(m.accountId, tag.runId, m.id);
    if (!entry) return undefined;
    const body = encodeRawSteps(await this.runs.readSteps(m.accountId, tag.runId, entry.position));
    return body.length > this.maxBodyBytes(m.accountId) ? new Uint8Array() : body;
  }

  private async failureBody(m: MessageRecord, tag: WorkflowTag): Promise<Uint8Array | undefined> {
    const run = await this.runs.readRun(m.accountId, tag.runId);
    const [initial] = await this.runs.readSteps(m.accountId, tag.runId, 0);
    if (!run || !initial) return undefined;
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(textOf(m.body));
    } catch {
      return undefined;
    }
    const sourceBody = toBase64(initial.body);
    return bytesOf(JSON.stringify({ ...body, sourceBody, workflowRunId: run.runId, workflowCreatedAt: run.createdAt }));
  }
}
