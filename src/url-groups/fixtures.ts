import { Type } from "@sinclair/typebox";
import type { Account } from "../accounts/accounts.ts";
import type { FixtureChecker } from "../config/fixture-check.ts";
import type { WriteTx } from "../store/transactor.ts";
import type { UrlGroupService } from "./service.ts";

/**
 * `accounts[].urlGroups[]` of the config file: applied at every start. Endpoints are added (a named
 * endpoint gets the fixture's URL); endpoints added through the API are kept.
 */
export const UrlGroupFixture = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    endpoints: Type.Array(
      Type.Object({ url: Type.String({ minLength: 1 }), name: Type.Optional(Type.String()) }, { additionalProperties: false }),
      { minItems: 1 },
    ),
    headers: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]))),
  },
  { additionalProperties: false },
);

/** Runs inside the start's write (`tx`). */
export async function applyUrlGroupFixtures(
  tx: WriteTx,
  account: Account,
  base: string,
  groups: UrlGroupService,
  check: FixtureChecker,
  nowMs: number,
): Promise<void> {
  for (const [i, raw] of (account.source.urlGroups ?? []).entries()) {
    const path = `${base}.urlGroups[${i}]`;
    const fixture = check.shape(UrlGroupFixture, raw, path);
    await check.attemptAsync(path, () => groups.addEndpoints(tx, account, fixture.name, fixture.endpoints, nowMs));
    const { name, headers } = fixture;
    if (!headers) continue;
    await check.attemptAsync(`${path}.headers`, () => groups.setDefaultHeaders(tx, account, name, headers, nowMs));
  }
}
