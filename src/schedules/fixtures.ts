import { Type } from "@sinclair/typebox";
import type { Account } from "../accounts/accounts.ts";
import type { FixtureChecker } from "../config/fixture-check.ts";
import type { Dialect } from "../core/dialect.ts";
import { HttpError } from "../core/errors.ts";
import { parseDestination } from "../messages/destination.ts";
import { headerPairs, toHeaders } from "../util/header-pairs.ts";
import { checkCron } from "./cron.ts";
import type { WriteTx } from "../store/transactor.ts";
import type { ScheduleDraft, ScheduleService } from "./service.ts";
import type { ScheduleStorage } from "./storage.ts";

/**
 * `accounts[].schedules[]` of the config file. A fixture schedule is created when missing and
 * replaced when its definition changed; otherwise it is left alone, so its pause state and its last
 * and next trigger survive restarts.
 */
export const ScheduleFixture = Type.Object(
  {
    scheduleId: Type.String({ minLength: 1 }),
    destination: Type.String({ minLength: 1 }),
    cron: Type.String({ minLength: 1 }),
    /** Publish headers with the dialect's prefix (`Svc-Retries`, `Svc-Forward-X`, `Content-Type`, ...). */
    headers: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]))),
    body: Type.Optional(Type.String()),
    paused: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** Runs inside the start's write (`tx`). */
export async function applyScheduleFixtures(
  tx: WriteTx,
  account: Account,
  base: string,
  deps: { schedules: ScheduleService; store: ScheduleStorage; dialect: Dialect },
  check: FixtureChecker,
  nowMs: number,
): Promise<void> {
  for (const [i, raw] of (account.source.schedules ?? []).entries()) {
    const path = `${base}.schedules[${i}]`;
    const f = check.shape(ScheduleFixture, raw, path);
    check.attempt(`${path}.cron`, () => checkCron(f.cron, "cron"));
    check.attempt(`${path}.destination`, () => parseDestination(f.destination, deps.dialect));
    const headers = toHeaders(check.attempt(`${path}.headers`, () => headerPairs(f.headers, "headers")));
    headers.set(`${deps.dialect.prefix}-Cron`, f.cron);
    headers.set(`${deps.dialect.prefix}-Schedule-Id`, f.scheduleId);
    const request = { destination: f.destination, headers, body: new TextEncoder().encode(f.body ?? "") };
    let draft: ScheduleDraft;
    try {
      draft = await deps.schedules.draft(tx, account, request);
    } catch (error) {
      // An unknown URL Group is a problem of the destination; anything else of the headers.
      const field = error instanceof HttpError && error.status === 404 ? "destination" : "headers";
      return check.fail(`${path}.${field}`, (error as Error).message);
    }
    const existing = await deps.store.get(tx, account.id, draft.row.id);
    const unchanged =
      existing &&
      existing.cron === draft.row.cron &&
      existing.destination === draft.row.destination &&
      existing.headers === draft.row.headers &&
      existing.query === draft.row.query &&
      Buffer.from(existing.body).equals(Buffer.from(draft.row.body));
    if (!unchanged) await check.attemptAsync(path, () => deps.schedules.save(tx, draft, nowMs, f.paused ?? false));
  }
}
