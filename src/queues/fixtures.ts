import { Type } from "@sinclair/typebox";
import type { Account } from "../accounts/accounts.ts";
import type { FixtureChecker } from "../config/fixture-check.ts";
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

export function applyQueueFixtures(account: Account, base: string, queues: QueueService, check: FixtureChecker, nowMs: number) {
  (account.source.queues ?? []).forEach((raw, i) => {
    const path = `${base}.queues[${i}]`;
    const fixture = check.shape(QueueFixture, raw, path);
    check.attempt(path, () => queues.upsert(account, fixture, nowMs));
  });
}
