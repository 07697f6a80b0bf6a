/**
 * pg-boss row of scripts/bench-postgres.ts (see queue-driver.mjs for the arguments and the timing).
 *
 * Without --tuned, pg-boss's defaults are kept: polling every 2 s (pollingIntervalSeconds), no
 * LISTEN/NOTIFY (useListenNotify and a queue's notify are opt-in), no burst fetching, a pool of 10
 * connections. Concurrency as svcd's delivery: 64 workers (localConcurrency), each POSTing the jobs
 * of its batch one after another, so 64 requests are under way at once; batchSize 32, so at most
 * 64 × 32 = 2,048 jobs are claimed at once, svcd's limit of messages in flight. A worker whose batch
 * took less than the poll interval waits out the rest of it before its next fetch, so with the
 * defaults pg-boss delivers at most 2,048 jobs per 2 s.
 *
 * With --tuned, set up for throughput as pg-boss 12's options advise (dist/types.d.ts): the
 * LISTEN/NOTIFY listener on (`useListenNotify: true` on the instance, `notify: true` on the queue),
 * so a new job wakes the idle workers at once instead of at their next poll; `burstWhenBatchFull`,
 * so a worker whose batch came back full fetches again with no delay; a pool as large as the
 * workers (`max`), so no fetch or completion waits for a connection. Same 64 workers × batches of 32.
 */
import { PgBoss } from "pg-boss";
import { postToSink, runDriver } from "./queue-driver.mjs";

const QUEUE = "bench";
const BATCH = 32;

const warn = (error) => process.stderr.write(`pg-boss: ${error?.stack ?? error}\n`);

let boss;

await runDriver(new URL(import.meta.url).pathname, {
  async prepare(o) {
    boss = new PgBoss(o.tuned ? { connectionString: o.db, useListenNotify: true, max: o.concurrency } : o.db);
    boss.on("error", warn);
    boss.on("warning", (w) => warn(w?.message ?? JSON.stringify(w)));
    await boss.start();
    await boss.createQueue(QUEUE, o.tuned ? { notify: true } : {});
  },
  async work(o) {
    const url = `${o.sink}/pg-boss`;
    const burst = o.tuned ? { burstWhenBatchFull: true } : {};
    const options = { batchSize: BATCH, localConcurrency: o.concurrency, ...burst };
    await boss.work(QUEUE, options, async (jobs) => {
      for (const job of jobs) await postToSink(url, job.data.body);
    });
    return () => boss.stop({ graceful: false });
  },
  async producer(o) {
    // A sender only: the worker process already runs pg-boss's maintenance and schema. Its pool is
    // pg-boss's default (10) in both setups: the producers' rate is not what --tuned is about.
    const sender = new PgBoss({ connectionString: o.db, supervise: false, schedule: false, migrate: false });
    sender.on("error", warn);
    await sender.start();
    return {
      enqueue: (body) => sender.send(QUEUE, { body }),
      close: () => sender.stop({ graceful: false }),
    };
  },
});
