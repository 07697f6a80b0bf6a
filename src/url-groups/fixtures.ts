import { Type } from "@sinclair/typebox";
import type { Account } from "../accounts/accounts.ts";
import type { FixtureChecker } from "../config/fixture-check.ts";
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

export function applyUrlGroupFixtures(account: Account, base: string, groups: UrlGroupService, check: FixtureChecker, nowMs: number) {
  (account.source.urlGroups ?? []).forEach((raw, i) => {
    const path = `${base}.urlGroups[${i}]`;
    const fixture = check.shape(UrlGroupFixture, raw, path);
    check.attempt(path, () => groups.addEndpoints(account, fixture.name, fixture.endpoints, nowMs));
    if (fixture.headers) check.attempt(`${path}.headers`, () => groups.setDefaultHeaders(account, fixture.name, fixture.headers!, nowMs));
  });
}
