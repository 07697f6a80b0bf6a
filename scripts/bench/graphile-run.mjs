/**
 * graphile-worker row of scripts/bench-postgres.ts (see queue-driver.mjs for the arguments and the
 * timing).
 *
 * Without --tuned, graphile-worker's defaults are kept (LISTEN/NOTIFY wake-ups on every new job, one
 * job per fetch, no local queue, no batched completions, 2 s poll for future jobs) but two:
 * concurrency 64, as svcd's delivery has 64 requests under way at once, and a pool of 64
 * connections, which graphile-worker itself asks for at that concurrency (it warns when
 * maxPoolSize < concurrency). Jobs are added with its WorkerUtils.addJob (the `add_job` SQL function).
 *
 * With --tuned, its batching on as its performance page (worker.graphile.org/docs/performance,
 * "Batching"; options in dist/index.d.ts, `GraphileConfig.WorkerOptions`) sets it for its own
 * throughput figures: `preset.worker.localQueue.size` 500 (the pool locks and fetches up to 500 jobs
 * at once and hands them to its workers from memory), `completeJobBatchDelay: 0` and
 * `failJobBatchDelay: 0` (the completions of one tick of the event loop go in one statement). Same
 * concurrency 64, pool 64 + 1 (the page's "concurrentJobs + 1").
 */
import { Logger, makeWorkerUtils, run } from "graphile-worker";
import { postToSink, runDriver } from "./queue-driver.mjs";

/** Warnings and errors on stderr; info and debug dropped, stdout stays the driver's. */
const logger = new Logger(() => (level, message) => {
  if (level === "error" || level === "warning") process.stderr.write(`graphile-worker ${level}: ${message}\n`);
});

/** What --tuned adds (see above). */
const TUNED = { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 };

await runDriver(new URL(import.meta.url).pathname, {
  async prepare(o) {
    const utils = await makeWorkerUtils({ connectionString: o.db, logger });
    await utils.migrate();
    await utils.release();
  },
  async work(o) {
    const url = `${o.sink}/graphile-worker`;
    const runner = await run({
      connectionString: o.db,
      concurrency: o.concurrency,
      maxPoolSize: o.tuned ? o.concurrency + 1 : o.concurrency,
      noHandleSignals: true,
      logger,
      taskList: { post: async (payload) => postToSink(url, payload.body) },
      ...(o.tuned ? { preset: { worker: TUNED } } : {}),
    });
    return () => runner.stop();
  },
  async producer(o) {
    const utils = await makeWorkerUtils({ connectionString: o.db, logger });
    return {
      enqueue: (body) => utils.addJob("post", { body }),
      close: () => utils.release(),
    };
  },
});
