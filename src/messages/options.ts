import { badRequest, quotaExceeded } from "../core/errors.ts";
import type { PlanLimits } from "../config/plans.ts";
import type { FlowControl } from "../model/message.ts";
import { DurationError, parseDuration, parseSecondsOrDuration } from "../util/duration.ts";
import { RetryExpressionError, compileRetryExpression } from "../util/retry-expression.ts";
import { canonicalHeaderName, isValidHeaderName, isValidHeaderValue } from "../util/canonical-header.ts";
import { parseLabels } from "../model/labels.ts";
import type { CallbackSpec } from "../model/message.ts";
import type { ConfigSource } from "./config-source.ts";
import { parseRedactFields, type RedactSpec } from "../model/redact.ts";

export const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] as const;
const DEFAULT_RETRIES = 3;
const WEEK_MS = 7 * 24 * 3600 * 1000;

/** Everything a publish request configures, validated against the account's plan. */
export interface PublishOptions {
  method: string;
  /** Absolute ms; undefined = now. */
  notBefore?: number;
  delayMs: number;
  retries: number;
  retryDelayExpr?: string;
  timeoutMs?: number;
  callback?: CallbackSpec;
  failureCallback?: CallbackSpec;
  /** Headers for the destination, prefix stripped, plus Content-Type. */
  headers: Array<[string, string]>;
  labels?: string[];
  flow?: FlowControl;
  deduplicationId?: string;
  contentBasedDeduplication: boolean;
  queueName?: string;
  redact?: RedactSpec;
}

function parseMethod(src: ConfigSource, suffix: string, fallback: string): string {
  const raw = src.get(suffix);
  if (raw === undefined) return fallback;
  const method = raw.trim().toUpperCase();
  if (!(METHODS as readonly string[]).includes(method))
    throw badRequest(`invalid ${src.name(suffix)} "${raw}": must be one of ${METHODS.join(", ")}`);
  return method;
}

function parseCount(src: ConfigSource, suffix: string, max: number): number | undefined {
  const raw = src.get(suffix);
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw.trim())) throw badRequest(`invalid ${src.name(suffix)} "${raw}": must be a non-negative integer`);
  const n = Number(raw.trim());
  if (n > max) throw quotaExceeded(`${src.name(suffix)} ${n} is above the plan's limit: the plan allows at most ${max}`);
  return n;
}

function parseDurationHeader(src: ConfigSource, suffix: string, units: string, maxMs: number): number | undefined {
  const raw = src.get(suffix);
  if (raw === undefined) return undefined;
  let ms: number;
  try {
    // A bare number is read as seconds, as the hosted service's SDKs send it.
    ms = /^\d+$/.test(raw.trim()) ? parseSecondsOrDuration(raw) : parseDuration(raw, units);
  } catch (error) {
    if (error instanceof DurationError) throw badRequest(`invalid ${src.name(suffix)} "${raw}": ${error.message}`);
    throw error;
  }
  if (ms > maxMs) throw quotaExceeded(`${src.name(suffix)} "${raw}" is above the plan's limit of ${formatLimit(maxMs)}`);
  return ms;
}

function parseRetryDelay(src: ConfigSource, suffix: string): string | undefined {
  const raw = src.get(suffix);
  if (raw === undefined) return undefined;
  try {
    compileRetryExpression(raw);
  } catch (error) {
    if (error instanceof RetryExpressionError) throw badRequest(`invalid ${src.name(suffix)} "${raw}": ${error.message}`);
    throw error;
  }
  return raw;
}

/** The plan limit of a duration, as a user reads it (`7d`, `15m`). */
function formatLimit(ms: number): string {
  for (const [unit, size] of [["d", 86_400_000], ["h", 3_600_000], ["m", 60_000], ["s", 1000]] as const)
    if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/**
 * Checks that `raw` is an http(s) URL with a host and returns it unchanged: URLs are stored,
 * echoed and signed byte for byte as the client sent them (never the re-serialised form, which
 * would turn `https://a.example` into `https://a.example/`).
 */
export function parseHttpUrl(raw: string, what: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badRequest(`invalid ${what} "${raw}": not a valid URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw badRequest(`invalid ${what} "${raw}": the scheme must be http or https`);
  if (!url.hostname) throw badRequest(`invalid ${what} "${raw}": missing host`);
  return raw;
}

function checkedHeaders(src: ConfigSource, pairs: Array<[string, string]>, origin: string): Array<[string, string]> {
  return pairs.map(([name, value]) => {
    if (!isValidHeaderName(name)) throw badRequest(`invalid header name "${name}" in ${origin}`);
    if (!isValidHeaderValue(value)) throw badRequest(`invalid value of ${origin}${name}: control characters are not allowed`);
    return [canonicalHeaderName(name), value];
  });
}

function parseCallback(src: ConfigSource, kind: "Callback" | "Failure-Callback", limits: PlanLimits): CallbackSpec | undefined {
  const raw = src.get(kind);
  if (raw === undefined) return undefined;
  const url = parseHttpUrl(raw.trim(), src.name(kind));
  return {
    url,
    method: parseMethod(src, `${kind}-Method`, "POST"),
    timeoutMs: parseDurationHeader(src, `${kind}-Timeout`, "smh", limits.maxTimeoutMs),
    retries: parseCount(src, `${kind}-Retries`, limits.maxRetries),
    delayMs: parseDurationHeader(src, `${kind}-Delay`, "smhd", limits.maxDelayMs),
    retryDelayExpr: parseRetryDelay(src, `${kind}-Retry-Delay`),
    headers: checkedHeaders(src, src.prefixed(`${kind}-Forward-`), src.name(`${kind}-Forward-`)),
  };
}

/** `parallelism=2, rate=10, period=1m`: any subset, comma separated, spaces optional. */
export function parseFlowControlValue(raw: string, headerName: string): Omit<FlowControl, "key"> {
  const out: Omit<FlowControl, "key"> = { periodMs: 1000 };
  for (const part of raw.split(",")) {
    const item = part.trim();
    if (!item) continue;
    const match = /^(parallelism|rate|period)\s*=\s*(\S+)$/i.exec(item);
    if (!match) throw badRequest(`invalid ${headerName} "${raw}": expected parallelism=<n>, rate=<n>, period=<duration>`);
    const [, key = "", value = ""] = match;
    if (key.toLowerCase() === "period") {
      try {
        out.periodMs = parseSecondsOrDuration(value);
      } catch {
        throw badRequest(`invalid ${headerName}: period "${value}" is not a duration`);
      }
      if (out.periodMs < 1000 || out.periodMs > WEEK_MS)
        throw badRequest(`invalid ${headerName}: period must be between 1s and 1 week`);
    } else {
      if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 1_000_000)
        throw badRequest(`invalid ${headerName}: ${key} must be a positive integer`);
      if (key.toLowerCase() === "rate") out.rate = Number(value);
      else out.parallelism = Number(value);
    }
  }
  if (out.rate === undefined && out.parallelism === undefined)
    throw badRequest(`invalid ${headerName} "${raw}": give rate and/or parallelism`);
  return out;
}

const NAME_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;
export function checkName(value: string, what: string): string {
  if (!NAME_PATTERN.test(value) || value === "." || value === "..")
    throw badRequest(`invalid ${what} "${value.slice(0, 140)}": use 1-128 letters, digits, "-", "_" or "."`);
  return value;
}

/** Headers forwarded by `<Prefix>-Header-Forward: true`: everything but transport and credentials. */
const NEVER_FORWARDED = new Set([
  "authorization", "host", "content-length", "connection", "keep-alive", "proxy-authenticate",
  "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade", "expect",
]);

export function parsePublishOptions(src: ConfigSource, limits: PlanLimits, nowMs: number): PublishOptions {
  const retries = parseCount(src, "Retries", limits.maxRetries) ?? Math.min(DEFAULT_RETRIES, limits.maxRetries);
  const delayMs = parseDurationHeader(src, "Delay", "smhd", limits.maxDelayMs) ?? 0;
  let notBefore: number | undefined;
  const rawNotBefore = src.get("Not-Before");
  if (rawNotBefore !== undefined) {
    if (!/^\d{1,12}$/.test(rawNotBefore.trim()))
      throw badRequest(`invalid ${src.name("Not-Before")} "${rawNotBefore}": must be a Unix time in seconds`);
    notBefore = Number(rawNotBefore.trim()) * 1000;
    if (notBefore - nowMs > limits.maxDelayMs)
      throw quotaExceeded(`${src.name("Not-Before")} is further ahead than the plan's maximum delay of ${formatLimit(limits.maxDelayMs)}`);
  }

  const forwarded = checkedHeaders(src, src.prefixed("Forward-"), src.name("Forward-"));
  const headers = new Map<string, [string, string]>();
  const headerForward = src.get("Header-Forward");
  if (headerForward !== undefined && !/^(true|false)$/i.test(headerForward.trim()))
    throw badRequest(`invalid ${src.name("Header-Forward")} "${headerForward}": must be true or false`);
  if (headerForward?.trim().toLowerCase() === "true") {
    // A URL Group's default headers count as part of the request, below the request's own.
    const forward = (value: string, name: string) => {
      const lower = name.toLowerCase();
      if (NEVER_FORWARDED.has(lower) || lower.startsWith(src.dialect.lowerPrefix)) return;
      headers.set(lower, [canonicalHeaderName(name), value]);
    };
    src.defaults.forEach(forward);
    src.headers.forEach(forward);
  }
  const contentType = src.headers.get("content-type");
  if (contentType) headers.set("content-type", ["Content-Type", contentType]);
  for (const [name, value] of forwarded) headers.set(name.toLowerCase(), [name, value]);

  const rawLabels = src.get("Label");
  const labels = rawLabels === undefined ? undefined : parseLabels(rawLabels, src.name("Label"));

  let flow: FlowControl | undefined;
  const flowKey = src.get("Flow-Control-Key");
  const flowValue = src.get("Flow-Control-Value");
  if (flowKey !== undefined) {
    if (!/^[A-Za-z0-9._:-]{1,256}$/.test(flowKey))
      throw badRequest(`invalid ${src.name("Flow-Control-Key")} "${flowKey.slice(0, 64)}": use letters, digits, ".", "_", ":" or "-"`);
    if (flowValue === undefined) throw badRequest(`${src.name("Flow-Control-Key")} needs ${src.name("Flow-Control-Value")}`);
    flow = { key: flowKey, ...parseFlowControlValue(flowValue, src.name("Flow-Control-Value")) };
  } else if (flowValue !== undefined) {
    throw badRequest(`${src.name("Flow-Control-Value")} needs ${src.name("Flow-Control-Key")}`);
  }

  const deduplicationId = src.get("Deduplication-Id");
  if (deduplicationId !== undefined && (deduplicationId.includes(":") || !deduplicationId || deduplicationId.length > 256))
    throw badRequest(`invalid ${src.name("Deduplication-Id")}: 1-256 characters, no ":"`);
  const contentDedup = src.get("Content-Based-Deduplication");
  if (contentDedup !== undefined && !/^(true|false)$/i.test(contentDedup.trim()))
    throw badRequest(`invalid ${src.name("Content-Based-Deduplication")} "${contentDedup}": must be true or false`);
  const queueName = src.get("Queue-Name");
  const redactFields = src.get("Redact-Fields");

  return {
    method: parseMethod(src, "Method", "POST"),
    notBefore,
    delayMs,
    retries,
    retryDelayExpr: parseRetryDelay(src, "Retry-Delay"),
    timeoutMs: parseDurationHeader(src, "Timeout", "smh", limits.maxTimeoutMs),
    callback: parseCallback(src, "Callback", limits),
    failureCallback: parseCallback(src, "Failure-Callback", limits),
    headers: [...headers.values()],
    labels,
    flow,
    deduplicationId,
    contentBasedDeduplication: contentDedup?.trim().toLowerCase() === "true",
    queueName: queueName === undefined ? undefined : checkName(queueName, src.name("Queue-Name")),
    redact: redactFields === undefined ? undefined : parseRedactFields(redactFields, src.name("Redact-Fields")),
  };
}
