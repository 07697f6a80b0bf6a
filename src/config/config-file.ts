import { Type, type Static } from "@sinclair/typebox";
import { firstProblem } from "../core/validation.ts";
import { readFileSync } from "node:fs";
import { ConfigError } from "./config.ts";

const PlanOverrides = Type.Partial(
  Type.Object({
    maxMessageSize: Type.Integer({ minimum: 1 }),
    maxRetries: Type.Integer({ minimum: 0 }),
    maxDelayMs: Type.Number({ minimum: 0 }),
    maxTimeoutMs: Type.Integer({ minimum: 1 }),
    maxUrlGroups: Type.Integer({ minimum: 0 }),
    maxEndpointsPerGroup: Type.Integer({ minimum: 0 }),
    maxSchedules: Type.Integer({ minimum: 0 }),
    maxQueues: Type.Integer({ minimum: 0 }),
    maxQueueParallelism: Type.Integer({ minimum: 1 }),
    flowGlobalParallelism: Type.Integer({ minimum: 1 }),
    dlqRetentionMs: Type.Integer({ minimum: 0 }),
    logRetentionMs: Type.Integer({ minimum: 0 }),
    pricePer100k: Type.Number({ minimum: 0 }),
    /** null: no limit. */
    burstPerSecond: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
    maxMessagesPerDay: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
  }),
  { additionalProperties: false },
);

/** Fixtures are validated by the domain that owns them, so they are only arrays of objects here. */
const Fixtures = Type.Array(Type.Record(Type.String(), Type.Unknown()));

export const AccountEntry = Type.Object(
  {
    email: Type.String({ minLength: 1 }),
    apiKey: Type.String({ minLength: 1 }),
    userId: Type.String({ minLength: 1, pattern: "^[A-Za-z0-9._-]+$" }),
    token: Type.String({ minLength: 1 }),
    /** Reads everything the token reads; refused (403) wherever the token publishes, changes or deletes. */
    readOnlyToken: Type.Optional(Type.String({ minLength: 1 })),
    currentSigningKey: Type.Optional(Type.String({ minLength: 1 })),
    nextSigningKey: Type.Optional(Type.String({ minLength: 1 })),
    plan: Type.Optional(Type.Union([Type.Literal("free"), Type.Literal("payg"), Type.Literal("fixed")])),
    searchIndexes: Type.Optional(Fixtures),
    vectorIndexes: Type.Optional(Fixtures),
    vectorUsage: Type.Optional(Fixtures),
    urlGroups: Type.Optional(Fixtures),
    schedules: Type.Optional(Fixtures),
    queues: Type.Optional(Fixtures),
  },
  { additionalProperties: false },
);

export const ConfigFileSchema = Type.Object(
  {
    plans: Type.Optional(
      Type.Object(
        { free: Type.Optional(PlanOverrides), payg: Type.Optional(PlanOverrides), fixed: Type.Optional(PlanOverrides) },
        { additionalProperties: false },
      ),
    ),
    accounts: Type.Optional(Type.Array(AccountEntry)),
  },
  { additionalProperties: false },
);

export type ConfigFile = Static<typeof ConfigFileSchema>;
export type AccountConfig = Static<typeof AccountEntry>;

export function loadConfigFile(path: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a folder" : code === "EACCES" ? "not readable by this user" : (error as Error).message;
    throw new ConfigError("--config", `cannot read ${path}: ${reason}; check the path given to --config (or SVC_CONFIG)`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ConfigError("--config", `${path} is not valid JSON (${(error as Error).message}); fix the file or leave --config out`);
  }
  return parseConfigFile(raw, path);
}

export function parseConfigFile(raw: unknown, source = "config"): ConfigFile {
  const problem = firstProblem(ConfigFileSchema, raw, "");
  if (problem) throw new ConfigError("--config", `${source}: ${problem}`);
  const file = raw as ConfigFile;
  const seen = new Map<string, string>();
  for (const [i, account] of (file.accounts ?? []).entries()) {
    for (const [field, value] of [
      ["userId", account.userId],
      ["email", account.email],
      ["token", account.token],
      ["readOnlyToken", account.readOnlyToken],
    ] as const) {
      if (value === undefined) continue;
      // A token and a read-only token are one name space: one string must name one access.
      const key = `${field === "readOnlyToken" ? "token" : field}:${value}`;
      if (seen.has(key))
        throw new ConfigError("--config", `${source}: accounts[${i}].${field}: repeats ${seen.get(key)}`);
      seen.set(key, `accounts[${i}]`);
    }
  }
  return file;
}
