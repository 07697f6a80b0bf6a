import { badRequest } from "../core/errors.ts";
import { toBase64 } from "../util/base64.ts";
import { bytesOf, type ParsedStep } from "./raw-steps.ts";

/*
 * A rerun's new results for the steps it keeps: each is written into the step as the SDK reads it
 * back, so the workflow's code receives the value given, as it would have received the step's own.
 */

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const jsonText = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));

/** The step with `value` as its result; 400 for a step that has none to give. */
export function withResult(step: ParsedStep, value: unknown): ParsedStep {
  const name = `step "${step.stepName}" (${step.stepType})`;
  switch (step.stepType) {
    case "SleepFor":
    case "SleepUntil":
      throw badRequest(`${name} is a sleep: it has no result to give`);
    case "CreateWebhook":
    case "WaitForWebhook":
      throw badRequest(`${name}: a webhook's result cannot be given; rerun from that step instead`);
    case "Wait":
      // The event's data as notified: a text as it is, any other value as JSON.
      return { ...step, out: toBase64(bytesOf(jsonText(value))), waitTimeout: false };
    case "Call":
      if (!isObject(value)) throw badRequest(`${name}: a call's result is an object {status, body, header}`);
      return { ...step, out: callOut(step.out, value) };
    case "Invoke":
      if (!isObject(value)) throw badRequest(`${name}: an invoke's result is an object {body, isFailed, isCanceled}`);
      // The invoked run's result travels as JSON text, as svcd hands it over when that run ends.
      return {
        ...step,
        out: JSON.stringify({
          body: value.body === undefined ? undefined : JSON.stringify(value.body),
          isFailed: value.isFailed === true,
          isCanceled: value.isCanceled === true,
        }),
      };
    default:
      return { ...step, out: JSON.stringify(value) };
  }
}

/** Content types whose call answers the SDK decodes as UTF-8 text (its `LazyCallStep.isText`). */
const TEXT_TYPES = [
  "application/json",
  "application/xml",
  "application/javascript",
  "application/x-www-form-urlencoded",
  "application/xhtml+xml",
  "application/ld+json",
  "application/rss+xml",
  "application/atom+xml",
];

function isText(header: unknown): boolean {
  const entries = isObject(header) ? Object.entries(header) : [];
  const found = entries.find(([name]) => name.toLowerCase() === "content-type")?.[1];
  const type = Array.isArray(found) ? found[0] : found;
  return typeof type === "string" && (type.startsWith("text/") || TEXT_TYPES.some((t) => type.includes(t)));
}

// A call's answer reaches the SDK as a string of byte values (its body decoded with atob): for a
// text answer the SDK turns those bytes back into UTF-8 text.
const asBytes = (text: string) => Buffer.from(text, "utf8").toString("latin1");
const asText = (bytes: string) => Buffer.from(bytes, "latin1").toString("utf8");

/** A call's answer `{status, body, header}`: what `value` gives, the rest as the call had it. */
function callOut(out: unknown, value: Record<string, unknown>): string {
  const old = typeof out === "string" ? parseCall(out) : {};
  const header = value.header ?? old.header ?? {};
  if (!isObject(header)) throw badRequest("a call's result header is an object: name to a list of values");
  if (value.status !== undefined && !Number.isInteger(value.status)) throw badRequest("a call's result status is an integer");
  const body = value.body === undefined ? old.body : jsonText(value.body);
  const answer = JSON.stringify({ status: value.status ?? old.status ?? 200, body: body ?? "", header });
  return isText(header) ? asBytes(answer) : answer;
}

function parseCall(out: string): { status?: number; body?: string; header?: unknown } {
  try {
    const answer = JSON.parse(out) as { status?: number; body?: string; header?: unknown };
    return isText(answer.header) ? JSON.parse(asText(out)) : answer;
  } catch {
    return {};
  }
}
