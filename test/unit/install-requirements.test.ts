import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };

/**
 * What `npm install` needs: the Node.js version package.json's `engines` names, which the README
 * and DEVELOPERS.md say, and which every package npm installs accepts (so npm prints no
 * EBADENGINE warning there). The benchmark's peers (pg-boss, graphile-worker, the `node` package)
 * are no dependency: the bench installs them into .bench-peers/ itself.
 */
const ROOT = new URL("../..", import.meta.url).pathname;
const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
  packages: Record<string, { engines?: { node?: string } | string[]; optional?: boolean }>;
};

test("package.json names the Node.js that npm install needs, and the README and DEVELOPERS.md say it", () => {
  expect(pkg.engines.node).toBe(">=20.11");
  for (const doc of ["README.md", "DEVELOPERS.md"]) expect(readFileSync(join(ROOT, doc), "utf8")).toContain("Node.js (20.11 or later)");
});

test("every package npm installs accepts that Node.js: no EBADENGINE warning", () => {
  const oldest = pkg.engines.node.replace(">=", "") + ".0";
  const refusing = Object.entries(lock.packages)
    .map(([path, p]) => [path, Array.isArray(p.engines) ? undefined : p.engines?.node] as const)
    .filter(([, range]) => range !== undefined && !Bun.semver.satisfies(oldest, range))
    .map(([path, range]) => `${path.replace(/^node_modules\//, "")} wants node ${range}`);
  expect(refusing).toEqual([]);
});

test("the benchmark's peers are not dependencies of svcd", () => {
  const all = { ...pkg.dependencies, ...pkg.devDependencies } as Record<string, string>;
  expect(Object.keys(all).filter((name) => ["pg-boss", "graphile-worker", "node"].includes(name))).toEqual([]);
});
