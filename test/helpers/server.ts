import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ConfigFile } from "../../src/config/config-file.ts";
import { DEFAULT_ACCOUNT, defaultConfig, type ServerConfig } from "../../src/config/config.ts";
import type { Clock } from "../../src/core/clock.ts";
import { silentLogger, type Logger } from "../../src/core/log.ts";
import type { MessageListener } from "../../src/model/events.ts";
import { openSqliteEngine } from "../../src/engines/sqlite/engine.ts";
import { openServer } from "../../src/server.ts";
import { freshDatabase } from "./postgres.ts";

/** The storage engines the suite runs against: SQLite (a temp file) and PostgreSQL (a fresh database on the shared test server). */
export type Engine = "sqlite" | "postgres";
export const ENGINES: readonly Engine[] = ["sqlite", "postgres"];

export interface TestServerOptions {
  /** SQLite unless told (or SVC_TEST_ENGINE=postgres for the whole run). */
  engine?: Engine;
  config?: Partial<ServerConfig>;
  configFile?: ConfigFile;
  clock?: Clock;
  logger?: Logger;
  messageListeners?: MessageListener[];
  /**
   * SQLite runs every write twice, undoing the first run (GroupCommit's drill; also for a whole
   * run with SVC_TEST_REHEARSE=1): what it proves holds on PostgreSQL, which runs a write again
   * after a lock conflict.
   */
  rehearseWrites?: boolean;
}

export const basicAuth = (email: string, apiKey: string) => "Basic " + Buffer.from(`${email}:${apiKey}`).toString("base64");

/** A real svcd on a free port with a fresh temporary database. */
export async function startTestServer(opts: TestServerOptions = {}) {
  const dir = mkdtempSync(join(tmpdir(), "svcd-test-"));
  const config: ServerConfig = {
    ...defaultConfig(dir),
    port: 0,
    dbPath: join(dir, "svcd.sqlite"),
    logLevel: "warn",
    shutdownTimeoutMs: 1000,
    // Two workers whatever the machine: the suite covers what crosses between them (each
    // flow-control key on its worker, the global slots they share, a crash of one of them).
    workers: 2,
    ...opts.config,
  };
  const engine = opts.engine ?? (process.env.SVC_TEST_ENGINE as Engine | undefined) ?? "sqlite";
  if (engine === "postgres" && !opts.config?.dbPath) config.dbPath = await freshDatabase();
  const rehearseWrites = opts.rehearseWrites ?? process.env.SVC_TEST_REHEARSE === "1";
  const storage =
    engine === "sqlite" && rehearseWrites
      ? openSqliteEngine({ path: config.dbPath, busyTimeoutMs: config.busyTimeoutMs, log: silentLogger, rehearseWrites })
      : undefined;
  const server = await openServer(config, {
    storage,
    configFile: opts.configFile,
    clock: opts.clock,
    logger: opts.logger ?? silentLogger,
    messageListeners: opts.messageListeners,
  });
  const running = await server.start();
  const token = opts.configFile?.accounts?.[0]?.token ?? config.defaultAccount.token;
  const first = opts.configFile?.accounts?.[0] ?? config.defaultAccount;

  /** Messaging API call with the (first) account's bearer token unless `token` overrides it. */
  const api = (path: string, init: RequestInit & { token?: string | null } = {}) => {
    const headers = new Headers(init.headers);
    const useToken = init.token === undefined ? token : init.token;
    if (useToken !== null && !headers.has("authorization")) headers.set("authorization", `Bearer ${useToken}`);
    return fetch(running.url + path, { ...init, headers });
  };
  /** Management API call with Basic credentials of the (first) account unless overridden. */
  const mgmt = (path: string, init: RequestInit & { email?: string; apiKey?: string; noAuth?: boolean } = {}) => {
    const headers = new Headers(init.headers);
    if (!init.noAuth && !headers.has("authorization"))
      headers.set("authorization", basicAuth(init.email ?? first.email, init.apiKey ?? first.apiKey));
    return fetch(running.managementUrl + path, { ...init, headers });
  };

  return {
    server,
    ctx: server.ctx,
    /** The SQLite database of a server on the SQLite engine (consistency checks, fault drills). */
    get db() {
      if (server.storage.kind !== "sqlite") throw new Error("this test server does not run on SQLite");
      return server.storage.db;
    },
    dir,
    config,
    url: running.url,
    managementUrl: running.managementUrl,
    token,
    api,
    mgmt,
    async stop() {
      await server.stop({ deadlineMs: 500 });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type TestServer = Awaited<ReturnType<typeof startTestServer>>;
export { DEFAULT_ACCOUNT };
