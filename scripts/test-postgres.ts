
/**
 * `npm test`'s second pass: the integration tests that matter for storage, run again with every
 * test server on PostgreSQL (SVC_TEST_ENGINE=postgres: test/helpers/server.ts gives each one a
 * fresh database on the run's embedded PostgreSQL). The same test files, not copies; what is
 * specific to one engine (SQLite fault drills, reading the SQLite file) is left out. Results go to
 * .test-results/junit-postgres.xml, beside the first pass's report.
 */
const FILES = [
  "batch",
  "bounded-pages",
  "claim-on-insert",
  "commit-failures",
  "control-clock",
  "control-plane",
  "dedup",
  "dlq-ids",
  "faults",
  "flow-control",
  "flow-control-steering",
  "isolation",
  "hosted-details",
  "log-redaction",
  "management-stats-e2e",
  "management-vector",
  "mcp",
  "mcp-workflows",
  "message-events",
  "messaging-bad-input",
  "messaging-delivery",
  "messaging-retries",
  "metrics",
  "outcome-isolation",
  "queues",
  "rate-limits",
  "read-only-tokens",
  "regions",
  "receiver-faults",
  "redact-fields",
  "retention",
  "schedule-commit-failures",
  "signature-clock",
  "tracing",
  "url-groups",
  "validation-messages",
].map((name) => `test/integration/${name}.test.ts`);
// The workflow layer on PostgreSQL, with the official SDK (the crash drill kills a SQLite server).
const WORKFLOWS = [
  "contract/workflow-commit-failures",
  "contract/workflow-sdk",
  "contract/workflow-sdk-clock",
  "contract/workflow-sdk-endpoint-calls",
  "contract/workflow-sdk-failures",
  "contract/workflow-sdk-hosted",
  "contract/workflow-sdk-lazy",
  "contract/workflow-sdk-logs",
  "contract/workflow-sdk-settings",
  "contract/workflow-sdk-redact",
  "contract/workflow-sdk-rerun",
  "contract/workflow-sdk-rerun-inputs",
  "contract/workflow-sdk-triggers",
  "contract/workflow-sdk-webhook",
  "contract/workflow-stats",
  "contract/workflow-tracing",
  "integration/workflow-protocol",
  "integration/workflow-rerun-protocol",
].map((name) => `test/${name}.test.ts`);

export {};

// Test files named on the command line replace the list (to rerun one file on PostgreSQL); other
// arguments (bun test's options) are passed on.
const args = process.argv.slice(2);
const named = args.filter((arg) => arg.endsWith(".ts"));
const files = named.length > 0 ? named : [...FILES, ...WORKFLOWS];
const options = args.filter((arg) => !arg.endsWith(".ts"));
const proc = Bun.spawn([process.execPath, "--config=test/bunfig.postgres.toml", "test", "--timeout", "30000", ...files, ...options], {
  env: { ...process.env, SVC_TEST_ENGINE: "postgres" },
  stdio: ["inherit", "inherit", "inherit"],
});
process.exit(await proc.exited);
