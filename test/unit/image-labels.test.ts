import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { browsableUrl, gitFacts, imageLabels, labelArgs } from "../../scripts/image-labels.ts";

/**
 * The container image's OCI labels as `npm run build:image` passes them to podman or docker (the
 * build itself runs in test/integration/container.test.ts where podman is installed).
 */
const ROOT = new URL("../..", import.meta.url).pathname;

test("the labels name the license, the version, the commit, the repository and the build time", () => {
  const labels = imageLabels({ version: pkg.version, license: pkg.license, revision: "0123abcd", source: "https://example.org/svcd", created: "2026-11-28T08:00:00Z" });
  expect(labels).toEqual({
    "org.opencontainers.image.title": "svcd",
    "org.opencontainers.image.licenses": "MIT",
    "org.opencontainers.image.version": pkg.version,
    "org.opencontainers.image.created": "2026-11-28T08:00:00Z",
    "org.opencontainers.image.revision": "0123abcd",
    "org.opencontainers.image.source": "https://example.org/svcd",
  });
  expect(labelArgs({ a: "1", b: "x y" })).toEqual(["--label", "a=1", "--label", "b=x y"]);
  // Unknown facts are left out rather than guessed.
  expect(Object.keys(imageLabels({ version: "1.0.0", license: "MIT", created: "now" }))).not.toContain("org.opencontainers.image.source");
});

test("the Containerfile's own labels say the same license as package.json", () => {
  const containerfile = readFileSync(join(ROOT, "Containerfile"), "utf8");
  expect(containerfile).toContain(`org.opencontainers.image.licenses="${pkg.license}"`);
});

test("a git remote becomes a browsable source URL", () => {
  expect(browsableUrl("git@github.com:acme/svcd.git")).toBe("https://github.com/acme/svcd");
  expect(browsableUrl("https://github.com/acme/svcd.git")).toBe("https://github.com/acme/svcd");
  expect(browsableUrl("https://user:token@git.example.org/team/svcd")).toBe("https://git.example.org/team/svcd");
  expect(browsableUrl("ssh://git@git.example.org:2222/team/svcd.git")).toBe("https://git.example.org/team/svcd");
  expect(browsableUrl("/srv/git/svcd")).toBeUndefined();
});

test("the revision and source come from the checkout: its HEAD commit and its origin remote", async () => {
  const dir = mkdtempSync(join(tmpdir(), "svcd-labels-"));
  try {
    const git = (...args: string[]) => Bun.spawnSync(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", ...args], { cwd: dir }).stdout.toString().trim();
    git("init", "-q");
    git("commit", "-q", "--allow-empty", "-m", "first");
    expect(await gitFacts(dir)).toEqual({ revision: git("rev-parse", "HEAD"), source: undefined });
    git("remote", "add", "origin", "git@github.com:acme/svcd.git");
    expect(await gitFacts(dir)).toEqual({ revision: expect.stringMatching(/^[0-9a-f]{40}$/), source: "https://github.com/acme/svcd" });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
