import { afterAll, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { freePort, startPostgresServer } from "../helpers/postgres-server.ts";
import { testUnless } from "../helpers/skip.ts";

/**
 * The PostgreSQL the suite and the benchmarks run (test/helpers/postgres-server.ts). As root it runs
 * as another user, from a folder that user can reach, wherever the checkout is; where there is no
 * such folder it fails at once with one line.
 */

const root = process.getuid?.() === 0;
// A private folder (0700, as mktemp -d makes it): another user cannot enter it.
const privateDir = mkdtempSync(join(tmpdir(), "svcd-private-"));
const openDir = mkdtempSync(join(tmpdir(), "svcd-open-"));
chmodSync(openDir, 0o755);
afterAll(() => {
  rmSync(privateDir, { recursive: true, force: true });
  rmSync(openDir, { recursive: true, force: true });
});

test("runs from a folder of its own (as root: the first its user can reach), answers, removes it when stopped", async () => {
  const port = await freePort();
  const places = [privateDir, openDir];
  const server = await startPostgresServer({ port, user: "postgres", password: "pw", settings: { fsync: "off" }, places });
  const sql = new SQL(`postgres://postgres:pw@127.0.0.1:${port}/postgres`, { max: 1 });
  try {
    const [row] = await sql`SELECT current_user AS who, 1 + 1 AS two`;
    expect(row).toEqual({ who: "postgres", two: 2 });
    // As root the server user could not enter the private folder: it runs from the open one.
    expect(readdirSync(root ? openDir : privateDir)).toHaveLength(1);
    expect(readdirSync(root ? privateDir : openDir)).toEqual([]);
  } finally {
    await sql.close();
    await server.stop();
  }
  expect([...readdirSync(privateDir), ...readdirSync(openDir)]).toEqual([]);
});

const onlyUnreachable = "as root, with only folders the server user cannot reach: fails with one line naming them (needs root)";
testUnless(root ? null : "not root")(onlyUnreachable, async () => {
  const start = startPostgresServer({ port: 1, user: "postgres", password: "pw", places: [privateDir] });
  const error = (await start.then(() => null, (e: Error) => e))!;
  expect(error).toBeInstanceOf(Error);
  expect(error.message).toContain(`cannot run the server from ${privateDir}`);
  expect(error.message).toContain("set TMPDIR to a folder it can reach");
  expect(error.message).not.toContain("\n");
  expect(readdirSync(privateDir)).toEqual([]);
});
