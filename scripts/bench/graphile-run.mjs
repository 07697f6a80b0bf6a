/**
 * graphile-worker row of scripts/bench-postgres.ts (see queue-driver.mjs for the arguments and the
 * timing).
 *
 * graphile-worker's defaults are kept (LISTEN/NOTIFY wake-ups on every new job, one job per fetch,
 * no local queue, no batched completions, 2 s poll for future jobs) but two: concurrency 64, as
 * svcd's delivery has 64 requests under way at once, and a pool of 64 connections, which
 * graphile-worker itself asks for at that concurrency (it warns when maxPoolSize < concurrency).
 * Jobs are added with its WorkerUtils.addJob (the `add_job` SQL function).
 */
import { Logger, makeWorkerUtils, run } from "graphile-worker";
import { postToSink, runDriver } from "./queue-driver.mjs";

/** Warnings and errors on stderr; info and debug dropped, stdout stays the driver's. */
const logger = new Logger(() => (level, message) => {
  if (level === "error" || level === "warning") process.stderr.write(`graphile-worker ${level}: ${message}\n`);
});

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
      maxPoolSize: o.concurrency,
      noHandleSignals: true,
      logger,
      taskList: { post: async (payload) => postToSink(url, payload.body) },
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
