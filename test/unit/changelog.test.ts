import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import pkg from "../../package.json" with { type: "json" };

const changelog = readFileSync(new URL("../../CHANGELOG.md", import.meta.url), "utf8");

test("CHANGELOG.md follows Keep a Changelog: Unreleased first, then package.json's version with its date", () => {
  const versions = [...changelog.matchAll(/^## \[([^\]]+)\](?: - (\d{4}-\d\d-\d\d))?$/gm)].map((m) => [m[1], m[2] ?? null]);
  expect(versions[0]).toEqual(["Unreleased", null]);
  expect(versions.find(([v]) => v === pkg.version)?.[1]).toMatch(/^\d{4}-\d\d-\d\d$/);
  // Only the kinds of change the format names.
  const kinds = new Set([...changelog.matchAll(/^### (.+)$/gm)].map((m) => m[1]));
  for (const kind of kinds) expect(["Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"]).toContain(kind!);
});
