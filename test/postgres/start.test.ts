import { describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { SQL } from "bun";
import { postgresMigrations } from "../../src/engines/postgres/ddl.ts";
import { connect } from "../../src/engines/postgres/connect.ts";
import { migratePostgres } from "../../src/engines/postgres/migrate.ts";
import { POSTGRES_MIGRATIONS } from "../../src/engines/postgres/schema.ts";
import { MIGRATIONS } from "../../src/engines/migrations.ts";
import { BUN, MAIN, spawnServer } from "../helpers/process.ts";
import { waitUntil } from "../helpers/wait.ts";
import { freshDatabase, testPostgres, wrongPasswordUrl } from "../helpers/postgres.ts";

/** svcd run to its exit with `--db url`. */
function runSvcd(url: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(BUN, [MAIN, "--port", "0", "--db", url], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe("a PostgreSQL database that cannot be used fails the start with one line and exit 2", () => {
  const cases: Array<[string, () => Promise<string>, RegExp]> = [
    ["a URL that is not one", async () => "postgres://[not-a-url", /not a valid URL/],
    ["nothing listening", async () => "postgres://svcd:secret@127.0.0.1:1/svcd", /nothing answers at that host and port/],
    ["a wrong password", wrongPasswordUrl, /refused the user name or password/],
    ["a database that does not exist", async () => (await testPostgres()).baseUrl + "/no_such_database", /does not exist/],
  ];
  for (const [what, url, expected] of cases) {
    test(what, async () => {
      const out = await runSvcd(await url());
      expect(out.code).toBe(2);
      expect(out.stdout).toBe("");
      const lines = out.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(expected);
      // The password never reaches the message.
      expect(out.stderr).not.toContain("not-the-password");
      expect(out.stderr).not.toContain("secret@");
    }, 30_000);
  }
});

test("a start on PostgreSQL prints the database without its password", async () => {
  const url = await freshDatabase();
  const password = decodeURIComponent(new URL(url).password);
  const svcd = await spawnServer([BUN, MAIN, "--port", "0", "--db", url]);
  try {
    await waitUntil(() => svcd.output().includes("SVC_METRICS_TOKEN"), { what: "the whole banner" });
    const line = svcd.output().split("\n").find((l) => l.startsWith("database: "))!;
    expect(line).toStartWith(`database: ${url.replace(`:${password}@`, ":***@")}  dialect: svc`);
    expect(svcd.output()).not.toContain(password);
  } finally {
    await svcd.stop();
  }
}, 30_000);

test("nodes starting together migrate once: the schema's migrations are recorded once each", async () => {
  const url = await freshDatabase();
  const all = postgresMigrations(MIGRATIONS, POSTGRES_MIGRATIONS);
  const pools = await Promise.all([1, 2, 3].map(() => connect(url, 2)));
  const applied = await Promise.all(pools.map((sql) => migratePostgres(sql, all)));
  // One of them applied everything, the others found nothing left to do.
  expect(applied.map((a) => a.length).sort((a, b) => a - b)).toEqual([0, 0, all.length]);
  const rows = await pools[0]!`SELECT id FROM schema_migrations ORDER BY id`;
  expect(rows.map((r: { id: string }) => r.id).sort()).toEqual(all.map((m) => m.id).sort());
  await Promise.all(pools.map((sql: SQL) => sql.close()));
}, 30_000);
