import { ConfigError } from "./config.ts";

export const SAMPLERS = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
] as const;
export type SamplerName = (typeof SAMPLERS)[number];

/** OpenTelemetry tracing, as the standard `OTEL_*` variables configure it (docs/operations.md, Tracing). */
export interface TracingConfig {
  /** The OTLP/HTTP traces endpoint spans are posted to (`…/v1/traces`). */
  endpoint: string;
  /** Sent with every export (a collector's API key). */
  headers: Record<string, string>;
  serviceName: string;
  /** `OTEL_RESOURCE_ATTRIBUTES`, besides the service name. */
  resource: Record<string, string>;
  sampler: SamplerName;
  /** The ratio of the `traceidratio` samplers, 0 to 1. */
  samplerRatio: number;
  /** The batch span processor's `OTEL_BSP_*`: how often a batch goes, how many spans wait at most (more are dropped). */
  batch: { delayMs: number; maxQueueSize: number; maxBatchSize: number; exportTimeoutMs: number };
}

type Env = Record<string, string | undefined>;

const set = (env: Env, name: string): string | undefined => {
  const value = env[name]?.trim();
  return value ? value : undefined;
};

/** `key1=value1,key2=value2`, values percent-encoded (the W3C Baggage form the OTEL_* lists use). */
function keyValueList(raw: string | undefined, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!raw) return out;
  for (const part of raw.split(",")) {
    if (!part.trim()) continue;
    const eq = part.indexOf("=");
    const key = eq > 0 ? part.slice(0, eq).trim() : "";
    if (!key) throw new ConfigError(name, `expected key=value pairs separated by commas (got "${part.trim()}")`);
    try {
      out[key] = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      throw new ConfigError(name, `the value of ${key} is not valid percent-encoding`);
    }
  }
  return out;
}

function httpUrl(value: string, name: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(name, `must be an http or https URL (got "${value}")`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ConfigError(name, `must be an http or https URL (got "${value}")`);
  return value;
}

/**
 * Tracing is on when an OTLP endpoint is set (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as is, or
 * `OTEL_EXPORTER_OTLP_ENDPOINT` with `/v1/traces` added) and neither `OTEL_SDK_DISABLED=true` nor
 * `OTEL_TRACES_EXPORTER=none` turns it off; null otherwise. Throws ConfigError for a value svcd
 * cannot honour (the start then fails with one line).
 */
export function tracingFromEnv(env: Env): TracingConfig | null {
  if (set(env, "OTEL_SDK_DISABLED")?.toLowerCase() === "true") return null;
  const exporters = set(env, "OTEL_TRACES_EXPORTER")?.toLowerCase().split(",").map((e) => e.trim());
  if (exporters?.includes("none")) return null;
  if (exporters && exporters.some((e) => e !== "otlp"))
    throw new ConfigError(
      "OTEL_TRACES_EXPORTER",
      `svcd exports traces over OTLP only: otlp or none (got "${env.OTEL_TRACES_EXPORTER}")`,
    );
  for (const name of ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"]) {
    const protocol = set(env, name);
    if (protocol && protocol !== "http/json" && protocol !== "http/protobuf")
      throw new ConfigError(name, `svcd sends OTLP over HTTP (JSON): http/json or http/protobuf (got "${protocol}")`);
  }
  const traces = set(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const base = set(env, "OTEL_EXPORTER_OTLP_ENDPOINT");
  let endpoint: string;
  if (traces) endpoint = httpUrl(traces, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  else if (base) endpoint = `${httpUrl(base, "OTEL_EXPORTER_OTLP_ENDPOINT").replace(/\/+$/, "")}/v1/traces`;
  else return null;

  const resource = keyValueList(set(env, "OTEL_RESOURCE_ATTRIBUTES"), "OTEL_RESOURCE_ATTRIBUTES");
  const serviceName = set(env, "OTEL_SERVICE_NAME") ?? resource["service.name"] ?? "svcd";
  delete resource["service.name"];

  const samplerName = set(env, "OTEL_TRACES_SAMPLER")?.toLowerCase() ?? "parentbased_always_on";
  if (!(SAMPLERS as readonly string[]).includes(samplerName))
    throw new ConfigError("OTEL_TRACES_SAMPLER", `must be one of ${SAMPLERS.join(", ")} (got "${samplerName}")`);
  const rawRatio = set(env, "OTEL_TRACES_SAMPLER_ARG");
  const samplerRatio = rawRatio === undefined ? 1 : Number(rawRatio);
  if (!Number.isFinite(samplerRatio) || samplerRatio < 0 || samplerRatio > 1)
    throw new ConfigError("OTEL_TRACES_SAMPLER_ARG", `must be a ratio between 0 and 1 (got "${rawRatio}")`);

  const count = (name: string, fallback: number, min = 1) => {
    const raw = set(env, name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min)
      throw new ConfigError(name, `must be an integer of at least ${min} (got "${raw}")`);
    return n;
  };
  const maxQueueSize = count("OTEL_BSP_MAX_QUEUE_SIZE", 2048);
  const batch = {
    delayMs: count("OTEL_BSP_SCHEDULE_DELAY", 5000, 0),
    maxQueueSize,
    maxBatchSize: Math.min(maxQueueSize, count("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512)),
    exportTimeoutMs: count("OTEL_BSP_EXPORT_TIMEOUT", 30_000),
  };

  return {
    endpoint,
    headers: {
      ...keyValueList(set(env, "OTEL_EXPORTER_OTLP_HEADERS"), "OTEL_EXPORTER_OTLP_HEADERS"),
      ...keyValueList(set(env, "OTEL_EXPORTER_OTLP_TRACES_HEADERS"), "OTEL_EXPORTER_OTLP_TRACES_HEADERS"),
    },
    serviceName,
    resource,
    sampler: samplerName as SamplerName,
    samplerRatio,
    batch,
  };
}
