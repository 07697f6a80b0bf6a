import { toBase64 } from "../util/base64.ts";
import type { StepEntry } from "./model.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The SDK's `RawStep`: what a step delivery's body and `GET /v2/workflows/runs/{id}` list. */
export interface RawStep {
  messageId: string;
  body: string;
  callType: StepEntry["callType"];
}

export const rawStep = (e: StepEntry): RawStep => ({ messageId: e.messageId, body: toBase64(e.body), callType: e.callType });

/** A step delivery's body: the run's list up to and including the delivered message. */
export function encodeRawSteps(entries: StepEntry[]): Uint8Array {
  return encoder.encode(JSON.stringify(entries.map(rawStep)));
}

/** What a step entry says about itself (the SDK's `Step`): undefined for bodies that are no step. */
export interface ParsedStep {
  stepId: number;
  stepName: string;
  stepType: string;
  concurrent: number;
  targetStep?: number;
  out?: unknown;
  [field: string]: unknown;
}

export function parseStep(body: Uint8Array): ParsedStep | undefined {
  try {
    const value = JSON.parse(decoder.decode(body)) as Partial<ParsedStep>;
    if (typeof value !== "object" || value === null || typeof value.stepId !== "number" || typeof value.stepName !== "string")
      return undefined;
    return { concurrent: 1, stepType: "Run", ...value } as ParsedStep;
  } catch {
    return undefined;
  }
}

/** A plan step announces one branch of a parallel group; its delivery runs that branch. */
export const isPlanStep = (s: ParsedStep) => s.stepId === 0 && s.targetStep !== undefined;

export const textOf = (bytes: Uint8Array) => decoder.decode(bytes);
export const bytesOf = (text: string) => encoder.encode(text);
