import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { ONE_ENGINE, postgresPassFiles } from "../../scripts/test-postgres.ts";

/** The PostgreSQL pass runs every integration and contract file but those about one engine, each named with its reason. */
test("every file the PostgreSQL pass leaves out exists and says why; everything else runs in it", () => {
  for (const [name, why] of Object.entries(ONE_ENGINE)) {
    expect(existsSync(new URL(`../${name}.test.ts`, import.meta.url))).toBe(true);
    expect(why.length).toBeGreaterThan(10);
  }
  const files = postgresPassFiles();
  expect(files).toContain("integration/messaging-delivery");
  expect(files).toContain("contract/workflow-sdk");
  expect(files.filter((f) => f in ONE_ENGINE)).toEqual([]);
});
