import type { DefaultAccountSeed, ServerConfig } from "./config.ts";
import { ConfigError } from "./config.ts";

/**
 * `svcd dev` stands in for the hosted service's own dev server. Its SDKs in dev mode
 * (`QSTASH_DEV=true`) call `http://127.0.0.1:<QSTASH_DEV_PORT or 8080>` with these public, fixed
 * credentials, and first ask `GET /v2/keys`: only when it answers exactly these signing keys do
 * they use the running server instead of downloading their own. The token is the hosted shape of
 * user `defaultUser` (the workflow SDK reads the user id out of it).
 */
export const DEV_ACCOUNT: Readonly<DefaultAccountSeed> = {
  email: "dev@svcd.local",
  apiKey: "svcd_dev_api_key",
  userId: "defaultUser",
  token: "eyJVc2VySUQiOiJkZWZhdWx0VXNlciIsIlBhc3N3b3JkIjoiZGVmYXVsdFBhc3N3b3JkIn0=",
  currentSigningKey: "sig_7kYjw48mhY7kAjqNGcy6cr29RJ6r",
  nextSigningKey: "sig_5ZB6DVzB1wjE8S6rZ7eenA8Pdnhs",
  // The default account's read-only token, which is never paired with another token: the accounts
  // derive one from the dev token instead.
  readOnlyToken: "svcd_dev_readonly_token",
  plan: "payg",
};

export const DEFAULT_DEV_PORT = 8080;

/**
 * Applied after the environment and before the flags: what the SDKs' dev mode expects wins over
 * SVC_* variables (an exported SVC_TOKEN or SVC_DB must not make the SDK miss the server); only a
 * flag given to `svcd dev` itself changes the port or the database.
 */
export function applyDevMode(config: ServerConfig, env: Record<string, string | undefined>): void {
  config.dialect = "upstash";
  config.dbPath = null;
  config.defaultAccount = { ...DEV_ACCOUNT };
  const port = env.QSTASH_DEV_PORT;
  if (port === undefined || port === "") config.port = DEFAULT_DEV_PORT;
  else if (/^\d+$/.test(port) && Number(port) > 0 && Number(port) <= 65535) config.port = Number(port);
  else throw new ConfigError("QSTASH_DEV_PORT", `must be a port number 1-65535 (got "${port}")`);
}

/** The hosted dev server's Go-style spellings (`-port=8081`, `-port 8081`) as the long flags. */
export function devFlagSpelling(arg: string): string {
  return /^-[a-z][a-z-]+(=|$)/.test(arg) ? `-${arg}` : arg;
}
