import { SQL } from "bun";
import { StartError } from "../../core/start-error.ts";

/** True for `postgres://…` and `postgresql://…`: the `--db` value names a PostgreSQL database. */
export function isPostgresUrl(value: string | null): value is string {
  return value !== null && /^postgres(ql)?:\/\//i.test(value);
}

/** The URL without its password, for messages and logs. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return url.replace(/\/\/([^:@/]*):[^@/]*@/, "//$1:***@");
  }
}

/** Why PostgreSQL refused, in words a user can act on. */
function failure(error: unknown): string {
  const e = error as { code?: string; errno?: string; message?: string };
  if (e?.code === "ERR_INVALID_URL") return "is not a valid URL (postgres://user:password@host:port/database)";
  if (e?.code === "ERR_POSTGRES_CONNECTION_REFUSED")
    return "nothing answers at that host and port (is PostgreSQL running, and reachable from here?)";
  if (e?.errno === "28P01" || e?.errno === "28000") return "PostgreSQL refused the user name or password";
  if (e?.errno === "3D000") return "that database does not exist (create it first: CREATE DATABASE ...)";
  if (e?.code === "ERR_POSTGRES_CONNECTION_TIMEOUT") return "the connection timed out";
  return `PostgreSQL answered: ${e?.message ?? String(error)}`;
}

/**
 * Opens a pool of `max` connections (with `settings`, PostgreSQL's run-time parameters) and checks
 * that the database answers; a refusal is one StartError line.
 */
export async function connect(url: string, max: number, settings: Record<string, string> = {}): Promise<SQL> {
  const shown = redactedUrl(url);
  let sql: SQL;
  try {
    new URL(url);
    sql = new SQL(url, { max, connectionTimeout: 10, idleTimeout: 0, connection: settings });
  } catch (error) {
    throw new StartError(`--db ${shown}: ${failure(error)}`);
  }
  try {
    await sql`SELECT 1`;
  } catch (error) {
    await sql.close().catch(() => {});
    throw new StartError(`--db ${shown}: ${failure(error)}`);
  }
  return sql;
}
