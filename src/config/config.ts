import { availableParallelism } from "node:os";
import { join } from "node:path";
import type { LogFormat, LogLevel } from "../core/log.ts";
import type { Dialect } from "../core/dialect.ts";
import { PLAN_NAMES, type PlanName } from "./plans.ts";
import { applyDevMode, devFlagSpelling } from "./dev-mode.ts";
import { tracingFromEnv, type TracingConfig } from "./tracing.ts";

export class ConfigError extends Error {
  constructor(
    readonly flag: string,
    message: string,
  ) {
    super(`${flag}: ${message}`);
  }
}

/** Credentials of the account used when no config file names accounts. */
export interface DefaultAccountSeed {
  email: string;
  apiKey: string;
  userId: string;
  token: string;
  readOnlyToken: string;
  currentSigningKey: string;
  nextSigningKey: string;
  plan: PlanName;
}

export interface ServerConfig {
  port: number;
  host: string;
  /** A SQLite file, a `postgres://` URL (PostgreSQL, several nodes may share it), or null: in memory. */
  dbPath: string | null;
  /** PostgreSQL connections of this node for reads and notifications. */
  dbPoolSize: number;
  /** PostgreSQL transactions of writes in flight at once on this node, each on a connection of its own. */
  dbTicks: number;
  /** PostgreSQL: a node silent this long is presumed dead (its in-flight messages go to the others). */
  nodeTimeoutMs: number;
  managementPort: number | null;
  configFile: string | null;
  logFormat: LogFormat;
  logLevel: LogLevel;
  retryDelayScale: number;
  clock: "real" | "manual";
  dialect: Dialect["name"];
  workers: number;
  shutdownTimeoutMs: number;
  /** How long a write waits for SQLite's lock before the request fails with 503. */
  busyTimeoutMs: number;
  defaultAccount: DefaultAccountSeed;
  /** Base URL announced to users; derived from host and port when absent. */
  publicUrl: string | null;
  /** Bearer token of `GET /metrics` (not an account's token: the metrics name every account). */
  metricsToken: string;
  /** The region svcd answers as: every delivery carries it (`Svc-Region`), so receivers pick its signing keys. */
  region: string;
  /** OpenTelemetry tracing, from the standard `OTEL_*` variables; null: off. */
  tracing: TracingConfig | null;
}

export const DEFAULT_ACCOUNT: DefaultAccountSeed = {
  email: "dev@svcd.local",
  apiKey: "svcd_dev_api_key",
  userId: "svcd-dev-user",
  token: "svcd_dev_token",
  readOnlyToken: "svcd_dev_readonly_token",
  currentSigningKey: "sig_svcdDevCurrentKey00000000000",
  nextSigningKey: "sig_svcdDevNextKey00000000000000",
  plan: "payg",
};

export const DEFAULT_METRICS_TOKEN = "svcd_dev_metrics_token";
/** The hosted service's first region: the official Receiver knows it (with EU-CENTRAL-1). */
export const DEFAULT_REGION = "US-EAST-1";

/**
 * Delivery workers: one on two cores, two above. A worker's share of an attempt (signing, the
 * request's JavaScript) is a fraction of the main thread's, so one keeps up with everything the
 * main thread can claim; on two cores a second one only adds thread switches (measured: 15% more
 * CPU per delivered message). Any number of attempts run at once on each.
 */
export function defaultWorkers(cores = availableParallelism()): number {
  return cores <= 2 ? 1 : 2;
}

export function defaultConfig(cwd = process.cwd()): ServerConfig {
  return {
    port: 8080,
    host: "127.0.0.1",
    dbPath: join(cwd, "data", "svcd.sqlite"),
    dbPoolSize: 6,
    dbTicks: 3,
    nodeTimeoutMs: 5_000,
    managementPort: null,
    configFile: null,
    logFormat: "pretty",
    logLevel: "info",
    retryDelayScale: 1,
    clock: "real",
    dialect: "svc",
    workers: defaultWorkers(),
    shutdownTimeoutMs: 10_000,
    busyTimeoutMs: 5_000,
    defaultAccount: { ...DEFAULT_ACCOUNT },
    publicUrl: null,
    metricsToken: DEFAULT_METRICS_TOKEN,
    region: DEFAULT_REGION,
    tracing: null,
  };
}

interface OptionSpec {
  flag: string;
  env: string;
  /** Takes no value: present means true. */
  boolean?: boolean;
  help: string;
  apply(config: ServerConfig, value: string, flag: string): void;
}

const oneOf =
  <T extends string>(values: readonly T[]) =>
  (value: string, flag: string): T => {
    if (!(values as readonly string[]).includes(value))
      throw new ConfigError(flag, `must be one of ${values.join(", ")} (got "${value}")`);
    return value as T;
  };

function port(value: string, flag: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535)
    throw new ConfigError(flag, `must be a port number 0-65535 (got "${value}")`);
  return Number(value);
}

function positive(value: string, flag: string, { integer = false } = {}): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n)))
    throw new ConfigError(flag, `must be a positive ${integer ? "integer" : "number"} (got "${value}")`);
  return n;
}

/** A region name as the hosted service writes them: `US-EAST-1`, `EU-CENTRAL-1` (upper case, dashes). */
function region(value: string, flag: string): string {
  const name = value.trim().toUpperCase().replaceAll("_", "-");
  if (!/^[A-Z]{2,}(-[A-Z0-9]+)+$/.test(name))
    throw new ConfigError(flag, `must be a region name like US-EAST-1 or EU-CENTRAL-1 (got "${value}")`);
  return name;
}

function nonEmpty(value: string, flag: string): string {
  if (value.trim() === "") throw new ConfigError(flag, "must not be empty");
  return value;
}

const OPTIONS: OptionSpec[] = [
  { flag: "--port", env: "SVC_PORT", help: "port of the HTTP listener (0 picks a free one)", apply: (c, v, f) => (c.port = port(v, f)) },
  { flag: "--host", env: "SVC_HOST", help: "interface to listen on", apply: (c, v, f) => (c.host = nonEmpty(v, f)) },
  { flag: "--db", env: "SVC_DB", help: "SQLite database file (created if missing), or postgres://user:password@host:port/database", apply: (c, v, f) => (c.dbPath = nonEmpty(v, f)) },
  { flag: "--db-pool", env: "SVC_DB_POOL", help: "PostgreSQL connections of this node for reads and notifications (default 6)", apply: (c, v, f) => (c.dbPoolSize = Math.max(3, positive(v, f, { integer: true }))) },
  { flag: "--db-ticks", env: "SVC_DB_TICKS", help: "PostgreSQL transactions of writes in flight at once, one connection each (default 3)", apply: (c, v, f) => (c.dbTicks = Math.min(32, positive(v, f, { integer: true }))) },
  { flag: "--node-timeout", env: "SVC_NODE_TIMEOUT_MS", help: "PostgreSQL: ms of silence after which a node is presumed dead (default 5000)", apply: (c, v, f) => (c.nodeTimeoutMs = Math.max(500, positive(v, f, { integer: true }))) },
  { flag: "--memory", env: "SVC_MEMORY", boolean: true, help: "keep everything in memory, nothing on disk", apply: (c) => (c.dbPath = null) },
  { flag: "--config", env: "SVC_CONFIG", help: "JSON file with accounts, plans, indexes and fixtures", apply: (c, v, f) => (c.configFile = nonEmpty(v, f)) },
  { flag: "--management-port", env: "SVC_MANAGEMENT_PORT", help: "serve the management API on its own port", apply: (c, v, f) => (c.managementPort = port(v, f)) },
  { flag: "--log-format", env: "SVC_LOG_FORMAT", help: "pretty | json", apply: (c, v, f) => (c.logFormat = oneOf(["pretty", "json"] as const)(v, f)) },
  { flag: "--log-level", env: "SVC_LOG_LEVEL", help: "debug | info | warn | error", apply: (c, v, f) => (c.logLevel = oneOf(["debug", "info", "warn", "error"] as const)(v, f)) },
  { flag: "--retry-delay-scale", env: "SVC_RETRY_DELAY_SCALE", help: "multiplies every retry delay (0.001 turns 12 s into 12 ms)", apply: (c, v, f) => (c.retryDelayScale = positive(v, f)) },
  { flag: "--clock", env: "SVC_CLOCK", help: "real | manual (manual: time moves only through /__svc/clock/advance)", apply: (c, v, f) => (c.clock = oneOf(["real", "manual"] as const)(v, f)) },
  { flag: "--dialect", env: "SVC_DIALECT", help: "svc | upstash (wire dialect of headers, token and issuer)", apply: (c, v, f) => (c.dialect = oneOf(["svc", "upstash"] as const)(v, f)) },
  { flag: "--workers", env: "SVC_WORKERS", help: "delivery worker threads", apply: (c, v, f) => (c.workers = Math.min(64, positive(v, f, { integer: true }))) },
  { flag: "--shutdown-timeout", env: "SVC_SHUTDOWN_TIMEOUT_MS", help: "ms to let in-flight deliveries finish on SIGINT/SIGTERM", apply: (c, v, f) => (c.shutdownTimeoutMs = positive(v, f, { integer: true })) },
  { flag: "--busy-timeout", env: "SVC_BUSY_TIMEOUT_MS", help: "ms a write waits for the database lock before answering 503", apply: (c, v, f) => (c.busyTimeoutMs = positive(v, f, { integer: true })) },
  { flag: "--metrics-token", env: "SVC_METRICS_TOKEN", help: `bearer token of GET /metrics (default ${DEFAULT_METRICS_TOKEN})`, apply: (c, v, f) => (c.metricsToken = nonEmpty(v, f)) },
  { flag: "--region", env: "SVC_REGION", help: `region every delivery names in its Region header (default ${DEFAULT_REGION})`, apply: (c, v, f) => (c.region = region(v, f)) },
  { flag: "--public-url", env: "SVC_PUBLIC_URL", help: "base URL printed at start (the URL clients reach svcd at, behind a proxy)", apply: (c, v, f) => (c.publicUrl = nonEmpty(v, f)) },
];

/** The default account's text fields, each set by an environment variable. */
const ACCOUNT_ENV: Array<[Exclude<keyof DefaultAccountSeed, "plan">, string]> = [
  ["token", "SVC_TOKEN"],
  ["readOnlyToken", "SVC_READONLY_TOKEN"],
  ["currentSigningKey", "SVC_CURRENT_SIGNING_KEY"],
  ["nextSigningKey", "SVC_NEXT_SIGNING_KEY"],
  ["email", "SVC_EMAIL"],
  ["apiKey", "SVC_API_KEY"],
  ["userId", "SVC_USER_ID"],
];

export type ParsedCommandLine =
  | { kind: "run"; config: ServerConfig; dev: boolean }
  | { kind: "health"; url: string }
  | { kind: "help"; text: string }
  | { kind: "version" };

/**
 * defaults < environment variables < command-line flags. Throws ConfigError naming the flag.
 * `dev ...` serves the official SDKs' dev mode (dev-mode.ts); `health ...` names the server to ask.
 */
export function parseCommandLine(
  args: readonly string[],
  env: Record<string, string | undefined>,
  cwd = process.cwd(),
): ParsedCommandLine {
  const command = args[0] === "dev" || args[0] === "health" ? args[0] : "run";
  const argv = command === "run" ? args : args.slice(1).map(command === "dev" ? devFlagSpelling : (a) => a);
  const config = defaultConfig(cwd);
  for (const option of OPTIONS) {
    const value = env[option.env];
    if (value === undefined || value === "") continue;
    if (option.boolean) {
      if (["1", "true", "yes"].includes(value.toLowerCase())) option.apply(config, value, option.env);
      else if (!["0", "false", "no"].includes(value.toLowerCase()))
        throw new ConfigError(option.env, `must be true or false (got "${value}")`);
    } else option.apply(config, value, option.env);
  }
  for (const [field, name] of ACCOUNT_ENV) {
    const value = env[name];
    if (value !== undefined && value !== "") config.defaultAccount[field] = value;
  }
  config.tracing = tracingFromEnv(env);
  if (env.SVC_PLAN) config.defaultAccount.plan = oneOf(PLAN_NAMES)(env.SVC_PLAN, "SVC_PLAN");
  if (command === "dev") applyDevMode(config, env);
  // A health check of `svcd dev` started with QSTASH_DEV_PORT finds it on that port.
  if (command === "health" && !env.SVC_PORT && env.QSTASH_DEV_PORT) config.port = port(env.QSTASH_DEV_PORT, "QSTASH_DEV_PORT");

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--help" || arg === "-h") return { kind: "help", text: helpText() };
    if (arg === "--version" || arg === "-v") return { kind: "version" };
    const eq = arg.indexOf("=");
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const option = OPTIONS.find((o) => o.flag === flag);
    if (!option) throw new ConfigError(arg, "unknown option (see --help)");
    if (option.boolean) {
      if (eq > 0) throw new ConfigError(flag, "takes no value");
      option.apply(config, "", flag);
      continue;
    }
    let value: string | undefined;
    if (eq > 0) value = arg.slice(eq + 1);
    else {
      value = argv[i + 1];
      i++;
    }
    if (value === undefined) throw new ConfigError(flag, "needs a value");
    option.apply(config, value, flag);
  }
  if (command === "dev" && config.dialect !== "upstash")
    throw new ConfigError("--dialect", "svcd dev always speaks the upstash dialect (the official SDKs' dev mode needs it)");
  if (command === "health") return { kind: "health", url: healthUrl(config) };
  checkPorts(config);
  return { kind: "run", config, dev: command === "dev" };
}

/** The liveness endpoint of the server these settings start; a wildcard host is asked on loopback. */
function healthUrl(config: ServerConfig): string {
  const host = ["0.0.0.0", "::", "[::]"].includes(config.host) ? "127.0.0.1" : config.host.includes(":") ? `[${config.host}]` : config.host;
  return `http://${host}:${config.port}/__svc/health`;
}

/** Two listeners on one port would each answer part of the requests: refuse the start instead. */
function checkPorts(config: ServerConfig): void {
  const { port, managementPort } = config;
  if (managementPort !== null && managementPort !== 0 && managementPort === port)
    throw new ConfigError(
      "--management-port",
      `${managementPort} is also the --port; give the management API a port of its own, or leave --management-port out to serve both APIs on ${port}`,
    );
}

export function helpText(): string {
  const lines = OPTIONS.map((o) => {
    const name = o.boolean ? o.flag : `${o.flag} <value>`;
    return `  ${name.padEnd(30)} ${o.help} [env ${o.env}]`;
  });
  return [
    "svcd — durable HTTP messaging and management API on SQLite",
    "",
    "Usage: svcd [options]          serve",
    "       svcd dev [options]      serve what the official SDKs find with QSTASH_DEV=true: the upstash",
    "                               dialect on port QSTASH_DEV_PORT or 8080, their dev credentials, in",
    "                               memory unless --db is given; -port=8081 is read as --port=8081",
    "       svcd health [options]   ask the server these settings start (--port, --host or their",
    "                               variables; QSTASH_DEV_PORT without SVC_PORT) whether it is alive:",
    "                               exit 0 if so, else 1",
    "",
    "Options:",
    ...lines,
    `  ${"--help".padEnd(30)} show this help`,
    `  ${"--version".padEnd(30)} print the version, commit and build date`,
    "",
    "Default account (no --config): SVC_TOKEN, SVC_READONLY_TOKEN, SVC_CURRENT_SIGNING_KEY, SVC_NEXT_SIGNING_KEY,",
    "SVC_EMAIL, SVC_API_KEY, SVC_USER_ID, SVC_PLAN (free | payg | fixed) override its credentials.",
    "",
    "Tracing (OpenTelemetry, off unless an endpoint is set): OTEL_EXPORTER_OTLP_ENDPOINT or",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER(_ARG).",
  ].join("\n");
}
