/**
 * `npm test`'s third pass: test files that write in every way svcd writes (publishes claimed on
 * insert, deliveries and their outcomes, retries, the DLQ, callbacks, queues, flow control,
 * schedules, workflow runs with the official SDK) run again on SQLite with every write run twice,
 * the first run undone (SVC_TEST_REHEARSE=1: GroupCommit's drill). They pass only if a write that
 * is not stored leaves nothing behind in memory either, which PostgreSQL relies on when it runs a
 * write again after a lock conflict. Files that count what runs inside writes (a listener that
 * sees every run, an id sequence) are not in the list.
 */
export const REHEARSED = [
  "contract/upstash-sdk",
  "contract/workflow-sdk",
  "contract/workflow-sdk-failures",
  "contract/workflow-sdk-rerun",
  "integration/batch",
  "integration/cancel-outcome-race",
  "integration/commit-failures",
  "integration/dedup",
  "integration/flow-control",
  "integration/flow-control-steering",
  "integration/fuzz",
  "integration/messaging-delivery",
  "integration/messaging-retries",
  "integration/queues",
  "integration/schedules",
  "integration/url-groups",
];

if (import.meta.main) {
  const files = REHEARSED.map((name) => `test/${name}.test.ts`);
  const proc = Bun.spawn([process.execPath, "--config=test/bunfig.rehearsal.toml", "test", "--timeout", "30000", ...files, ...process.argv.slice(2)], {
    env: { ...process.env, SVC_TEST_REHEARSE: "1", SVC_TEST_ENGINE: "sqlite" },
    stdio: ["inherit", "inherit", "inherit"],
  });
  process.exit(await proc.exited);
}
