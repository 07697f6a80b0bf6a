import type { AppContext } from "./context/app-context.ts";
import type { ServerConfig } from "./config/config.ts";
import type { RunningServer } from "./server.ts";
import { CONSOLE_PATH } from "./console/routes.ts";
import { isPostgresUrl, redactedUrl } from "./engines/postgres/connect.ts";

/** The token rides in the fragment: browsers never send it to the server, so no log sees it. */
export const consoleLink = (baseUrl: string, token: string) => `${baseUrl}${CONSOLE_PATH}#token=${encodeURIComponent(token)}`;

/** Prints where svcd listens and the credentials, as lines a user can paste into a shell. */
export function printBanner(config: ServerConfig, ctx: AppContext, running: RunningServer, dev = false): void {
  const accounts = ctx.accounts.all();
  const lines = [
    `svcd listening on ${running.url}${running.managementUrl !== running.url ? ` (management API on ${running.managementUrl})` : ""}`,
    // The banner goes to terminals and CI logs: a PostgreSQL password stays out of it.
    `database: ${isPostgresUrl(config.dbPath) ? redactedUrl(config.dbPath) : (config.dbPath ?? "in memory")}  dialect: ${config.dialect}  clock: ${config.clock}  region: ${config.region}`,
  ];
  if (accounts[0]) lines.push(`console: ${consoleLink(running.url, accounts[0].source.token)}`);
  if (ctx.dialect.name === "svc")
    lines.push("# for the hosted service's official clients (@upstash/qstash, Python qstash), start with --dialect upstash");
  if (dev) {
    const port = new URL(running.url).port;
    lines.push(
      `# dev mode: the official SDKs find this server with QSTASH_DEV=true${port === "8080" ? "" : ` QSTASH_DEV_PORT=${port}`}, no URL, token or keys needed`,
    );
  }
  lines.push("");
  for (const [i, account] of accounts.entries()) {
    const source = account.source;
    lines.push(`# account ${account.email} (plan ${account.plan})`);
    if (i > 0) lines.push(`# console: ${consoleLink(running.url, source.token)}`);
    lines.push(
      `export SVC_URL=${running.url}`,
      `export SVC_MANAGEMENT_URL=${running.managementUrl}`,
      `export SVC_TOKEN=${source.token}`,
      // Reads only (lists, logs, DLQ, schedules...); 403 on anything that publishes, changes or deletes.
      `export SVC_READONLY_TOKEN=${account.readOnlyToken}`,
      `export SVC_CURRENT_SIGNING_KEY=${account.currentSigningKey}`,
      `export SVC_NEXT_SIGNING_KEY=${account.nextSigningKey}`,
      `export SVC_EMAIL=${account.email}`,
      `export SVC_API_KEY=${source.apiKey}`,
      `export SVC_USER_ID=${account.id}`,
    );
    // The hosted service's SDKs read these: `new Client()` and `new Receiver()` work unconfigured.
    if (ctx.dialect.name === "upstash")
      lines.push(
        `export QSTASH_URL=${running.url}`,
        `export QSTASH_TOKEN=${source.token}`,
        `export QSTASH_CURRENT_SIGNING_KEY=${account.currentSigningKey}`,
        `export QSTASH_NEXT_SIGNING_KEY=${account.nextSigningKey}`,
      );
    lines.push("");
  }
  lines.push("# Prometheus: GET /metrics with Authorization: Bearer $SVC_METRICS_TOKEN", `export SVC_METRICS_TOKEN=${config.metricsToken}`, "");
  process.stdout.write(lines.join("\n") + "\n");
}
