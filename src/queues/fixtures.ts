import { Type } from "@sinclair/typebox";
import type { Account } from "../accounts/accounts.ts";
import type { FixtureChecker } from "../config/fixture-check.ts";
import type { WriteTx } from "../store/transactor.ts";
import type { QueueService } from "./service.ts";

/** `accounts[].queues[]` of the config file: upserted at every start. */
export const QueueFixture = Type.Object(
  {
    queueName: Type.String({ minLength: 1 }),
    parallelism: Type.Optional(Type.Integer({ minimum: 1 })),
    paused: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** Runs inside the start's write (`tx`). */
export async function applyQueueFixtures(
  tx: WriteTx,
  account: Account,
  base: string,
  queues: QueueService,
  check: FixtureChecker,
  nowMs: number,
): Promise<void> {
  for (const [i, raw] of (account.source.queues ?? []).entries()) {
    const path = `${base}.queues[${i}]`;
    const fixture = check.shape(QueueFixture, raw, path);
    await check.attemptAsync(path, () => queues.upsert(tx, account, fixture, nowMs));
  }
}
