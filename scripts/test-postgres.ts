/**
 * `npm test`'s second pass: every integration and contract test file run again with every test
 * server on PostgreSQL (SVC_TEST_ENGINE=postgres: test/helpers/server.ts gives each one a fresh
 * database on the run's embedded PostgreSQL). The same test files, not copies; the files that are
 * about one engine, or start no test server of their own, are left out, each with its reason
 * (test/unit/test-postgres-list.test.ts holds this list to the files on disk). Results go to
 * .test-results/junit-postgres.xml, beside the first pass's report.
 */
import { readdirSync } from "node:fs";

/** Test files the PostgreSQL pass leaves out, and why. */
export const ONE_ENGINE: Readonly<Record<string, string>> = {
  "integration/storage-engine": "runs every store of both engines itself, side by side",
  "integration/flow-control-engines": "runs flow control's stores on both engines itself",
  "integration/storage-errors": "SQLite's own failures: a locked file, a full disk, SQLite refusing a write",
  "integration/storage-at-start": "SQLite's file locked or unwritable at start",
  "integration/shared-bodies": "SQLite stores a message's body once (bodies.ts); PostgreSQL keeps its rows whole",
  "integration/wal-recycle": "SQLite's write-ahead log and its checkpointer",
  "integration/crash": "kills a SQLite server mid-write; test/postgres/outage.test.ts is PostgreSQL's drill",
  "integration/crash-kill9": "kills a SQLite server with SIGKILL; test/postgres/cluster.test.ts kills a node on PostgreSQL",
  "integration/workflow-crash": "kills a SQLite server during a workflow run; cluster-workflows.test.ts kills a node on PostgreSQL",
  "integration/binary": "the compiled executable's own start and flags (it serves through the same code as the sources)",
  "integration/cli": "command-line parsing and the start's output, no storage",
  "integration/start-errors": "a start that fails before any storage opens, or on a SQLite path",
  "integration/container": "the container image (podman)",
  "integration/npm-package": "the npm packages and their launcher, which run the binary on its default SQLite",
  "integration/pytest-plugin": "the pytest plugin, which starts svcd on its default in-memory SQLite",
  "integration/testing-kit": "svcd/testing, which starts svcd on its default in-memory SQLite",
  "integration/test-double-docs": "the test-double guide's pages, no server",
  "contract/dev-mode": "`svcd dev`: the SDKs' dev mode, in memory by definition",
};

const DIRS = ["integration", "contract"];

/** Every test file of the pass, as `dir/name`. */
export function postgresPassFiles(): string[] {
  return DIRS.flatMap((dir) =>
    readdirSync(new URL(`../test/${dir}/`, import.meta.url))
      .filter((f) => f.endsWith(".test.ts"))
      .map((f) => `${dir}/${f.slice(0, -".test.ts".length)}`),
  )
    .filter((name) => !(name in ONE_ENGINE))
    .sort();
}

if (import.meta.main) {
  // Test files named on the command line replace the list (to rerun one file on PostgreSQL); other
  // arguments (bun test's options) are passed on.
  const args = process.argv.slice(2);
  const named = args.filter((arg) => arg.endsWith(".ts"));
  const files = named.length > 0 ? named : postgresPassFiles().map((name) => `test/${name}.test.ts`);
  const options = args.filter((arg) => !arg.endsWith(".ts"));
  const proc = Bun.spawn([process.execPath, "--config=test/bunfig.postgres.toml", "test", "--timeout", "30000", ...files, ...options], {
    env: { ...process.env, SVC_TEST_ENGINE: "postgres" },
    stdio: ["inherit", "inherit", "inherit"],
  });
  process.exit(await proc.exited);
}
