import type { Account } from "../accounts/accounts.ts";
import type { Dialect } from "../core/dialect.ts";
import { randomBase58 } from "../core/ids.ts";
import { parseDestination } from "../messages/destination.ts";
import type { PublishService } from "../messages/publish.ts";
import { headerPairs, toHeaders } from "../util/header-pairs.ts";
import type { WorkflowHeaderNames } from "./protocol.ts";
import { bytesOf } from "./raw-steps.ts";
import type { RunStorage } from "./storage.ts";

export interface TriggerRequest {
  /** What follows `/v2/trigger/`: the workflow URL (and its query). */
  destination: string;
  headers: Headers;
  body: Uint8Array;
  callerIp?: string;
}

export interface TriggeredRun {
  workflowRunId: string;
  workflowCreatedAt: number;
  /** A run with this id existed already: nothing new was started. */
  deduplicated?: true;
}

export interface BatchTrigger {
  destination: string;
  body?: string;
  headers?: Record<string, string | string[]>;
}

/** The workflow protocol's version, which a step's delivery names (`<Prefix>-Workflow-Sdk-Version`). */
const PROTOCOL_VERSION = "1";

/**
 * Starts a run for a caller without the SDK (`POST /v2/trigger/{url}`). As the hosted service
 * does, the endpoint gets the run's start as its first step, as if the SDK had triggered it; only
 * when the request says `<Prefix>-Workflow-Unknown-Sdk: true` is the endpoint first called with
 * that header and the run's id, and its SDK starts the run as its own trigger would, with the same
 * id (one call more). Either way only an SDK from 1.0 on may answer the start (answers.ts).
 */
export class TriggerService {
  constructor(
    private readonly publisher: PublishService,
    private readonly runs: RunStorage,
    private readonly dialect: Dialect,
    private readonly names: WorkflowHeaderNames,
  ) {}

  async trigger(account: Account, request: TriggerRequest): Promise<TriggeredRun> {
    const headers = new Headers(request.headers);
    const runId = headers.get(this.names.runId) ?? `wfr_${randomBase58(21)}`;
    headers.set(this.names.runId, runId);
    headers.set(this.names.init, "true");
    const forward = `${this.dialect.prefix}-Forward-`;
    if (headers.get(this.names.unknownSdk)?.trim().toLowerCase() === "true") headers.set(forward + this.names.unknownSdk, "true");
    else headers.set(forward + this.names.sdkVersion, PROTOCOL_VERSION);
    const { destination, query } = parseDestination(request.destination, this.dialect);
    const { body } = await this.publisher.publish({
      account,
      destination,
      headers,
      query,
      body: request.body,
      callerIp: request.callerIp,
      restTrigger: true,
    });
    const deduplicated = !Array.isArray(body) && body.deduplicated;
    return {
      workflowRunId: runId,
      workflowCreatedAt: (await this.runs.readRun(account.id, runId))?.createdAt ?? 0,
      ...(deduplicated ? { deduplicated: true } : {}),
    };
  }

  /** `POST /v2/batch/trigger`: one run per element `{destination, body?, headers?}`, answered in order. */
  async triggerMany(account: Account, elements: BatchTrigger[], callerIp?: string): Promise<TriggeredRun[]> {
    return Promise.all(
      elements.map((e) =>
        this.trigger(account, { destination: e.destination, headers: toHeaders(headerPairs(e.headers, "headers")), body: bytesOf(e.body ?? ""), callerIp }),
      ),
    );
  }
}
