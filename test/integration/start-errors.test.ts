import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUN, MAIN, spawnServer, type ServerProcess } from "../helpers/process.ts";
import { tmpfsMissing, fillUp, withTmpfs } from "../helpers/tmpfs.ts";
import { testUnless } from "../helpers/skip.ts";

/**
 * Every failure to start is one line on stderr naming the value at fault and what to do, exit
 * status 2, nothing on stdout, never a stack trace. Each case runs svcd as a real subprocess.
 */

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs svcd to its exit; `uid` runs it as another user (file permissions do not bind root). */
function runSvcd(args: string[], opts: { uid?: number; env?: Record<string, string>; cwd?: string } = {}): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(BUN, [MAIN, ...args], {
      cwd: opts.cwd,
      env: { ...process.env, ...opts.env },
      stdio: ["ignore", "pipe", "pipe"],
      ...(opts.uid !== undefined ? { uid: opts.uid, gid: opts.uid } : {}),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The contract of a failed start: exit 2, one `svcd: ` line mentioning every `names`, no stack. */
function expectOneLineExit2(outcome: Outcome, ...names: string[]): string {
  expect(outcome.code).toBe(2);
  expect(outcome.stdout).toBe("");
  const lines = outcome.stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  const line = lines[0]!;
  expect(line).toStartWith("svcd: ");
  for (const name of names) expect(line).toContain(name);
  expect(line).not.toMatch(/\bat .*\.ts:\d+/);
  return line;
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "svcd-start-errors-"));
  // Readable by the unprivileged user of the permission cases below.
  chmodSync(dir, 0o755);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("ports", () => {
  let first: ServerProcess;
  let port: number;
  beforeAll(async () => {
    first = await spawnServer([BUN, MAIN, "--port", "0", "--memory"]);
    port = Number(new URL(first.url).port);
  });
  afterAll(() => first.stop());

  test("a second svcd on a busy port does not start (no port sharing)", async () => {
    const line = expectOneLineExit2(await runSvcd(["--port", String(port), "--memory"]), `--port ${port}`, "already in use");
    expect(line).toContain("choose another port");
    // The first one still answers alone.
    expect((await fetch(`${first.url}/__svc/health`)).status).toBe(200);
  });

  test("a busy management port stops the start, naming --management-port", async () => {
    expectOneLineExit2(await runSvcd(["--port", "0", "--management-port", String(port), "--memory"]), `--management-port ${port}`, "already in use");
  });

  test("a management port equal to the port stops the start", async () => {
    const line = expectOneLineExit2(await runSvcd(["--port", "18123", "--management-port", "18123", "--memory"]), "--management-port", "18123");
    expect(line).toContain("port of its own");
    expectOneLineExit2(await runSvcd(["--memory"], { env: { SVC_PORT: "18124", SVC_MANAGEMENT_PORT: "18124" } }), "18124");
  });

  test("a failed start creates nothing: no ./data/svcd.sqlite, no folder; an existing database stays", async () => {
    const cwd = mkdtempSync(join(dir, "fresh-"));
    expectOneLineExit2(await runSvcd(["--port", String(port)], { cwd }), `--port ${port}`, "already in use");
    expect(readdirSync(cwd)).toEqual([]);
    const nested = join(cwd, "a", "b", "svcd.sqlite");
    expectOneLineExit2(await runSvcd(["--port", String(port), "--db", nested]), "already in use");
    expect(readdirSync(cwd)).toEqual([]);

    // A database that was there before the failed start is left as it was.
    const kept = join(cwd, "kept.sqlite");
    const owner = await spawnServer([BUN, MAIN, "--port", "0", "--db", kept]);
    expect(await owner.stop()).toBe(0);
    const before = readdirSync(cwd).sort();
    expectOneLineExit2(await runSvcd(["--port", String(port), "--db", kept]), "already in use");
    expect(readdirSync(cwd).sort()).toEqual(before);
    expect(before).toContain("kept.sqlite");
  });

  test("an address that is not this machine's is named", async () => {
    expectOneLineExit2(await runSvcd(["--port", "0", "--memory", "--host", "192.0.2.1"]), "--host 192.0.2.1");
  });
});

describe("the database path", () => {
  test("a file where a folder should be", async () => {
    const file = join(dir, "a-file");
    writeFileSync(file, "not a folder");
    const db = join(file, "sub", "svcd.sqlite");
    expectOneLineExit2(await runSvcd(["--port", "0", "--db", db]), db, `${file} is a file, not a folder`, "--db");
  });

  test("a folder where the database file should be", async () => {
    const folder = join(dir, "a-folder");
    mkdirSync(folder);
    expectOneLineExit2(await runSvcd(["--port", "0", "--db", folder]), folder, "is a folder");
  });

  test("a file that is not a database", async () => {
    const file = join(dir, "garbage.sqlite");
    writeFileSync(file, "this is not an SQLite database, just text long enough to have a header".repeat(20));
    expectOneLineExit2(await runSvcd(["--port", "0", "--db", file]), file, "not an SQLite database");
  });

  testUnless(tmpfsMissing())("a read-only file system", async () => {
    await withTmpfs({ size: "1m", readOnly: true }, async (mount) => {
      const db = join(mount, "svcd.sqlite");
      expectOneLineExit2(await runSvcd(["--port", "0", "--db", db]), db, "read-only file system");
    });
  });

  // Root ignores file permissions: those cases run svcd as an unprivileged user when the tests run as root.
  const asUser = process.getuid?.() === 0 ? 65534 : undefined;
  const asUserMissing =
    asUser === undefined || runsAsUser(asUser) ? null : `needs user ${asUser} (nobody) able to run bun and read ${MAIN}`;

  testUnless(asUserMissing)("a folder this user cannot write", async () => {
    const locked = join(dir, "locked");
    mkdirSync(locked);
    chmodSync(locked, 0o555);
    const db = join(locked, "sub", "svcd.sqlite");
    expectOneLineExit2(await runSvcd(["--port", "0", "--db", db], { uid: asUser }), db, "no permission to create the folder");
    const direct = join(locked, "svcd.sqlite");
    expectOneLineExit2(await runSvcd(["--port", "0", "--db", direct], { uid: asUser }), direct, `the folder ${locked} is not writable`);
  });

  testUnless(asUserMissing)("a database file this user cannot write", async () => {
    const folder = join(dir, "readonly-file");
    mkdirSync(folder);
    chmodSync(folder, 0o777);
    const db = join(folder, "svcd.sqlite");
    writeFileSync(db, "");
    chmodSync(db, 0o444);
    expectOneLineExit2(await runSvcd(["--port", "0", "--db", db], { uid: asUser }), db, "the database file is not writable");
  });
});

describe("the config file", () => {
  test("missing", async () => {
    const file = join(dir, "missing.json");
    expectOneLineExit2(await runSvcd(["--port", "0", "--memory", "--config", file]), "--config", file);
  });

  test("not JSON", async () => {
    const file = join(dir, "bad.json");
    writeFileSync(file, "{ not json");
    expectOneLineExit2(await runSvcd(["--port", "0", "--memory", "--config", file]), "--config", file);
  });

  test("an invalid entry", async () => {
    const file = join(dir, "bad-plan.json");
    writeFileSync(file, JSON.stringify({ accounts: [{ email: "a@example.com", apiKey: "k", userId: "a", token: "t", plan: "gold" }] }));
    expectOneLineExit2(await runSvcd(["--port", "0", "--memory", "--config", file]), "--config", "plan");
  });
});

/** Whether an unprivileged user can run svcd from this checkout (it must read the sources). */
function runsAsUser(uid: number): boolean {
  const probe = spawnSync(BUN, ["-e", `require("node:fs").readFileSync(${JSON.stringify(MAIN)})`], { uid, gid: uid, stdio: "ignore" });
  return probe.status === 0;
}

testUnless(tmpfsMissing())("a full disk where the database must be created", async () => {
  await withTmpfs({ size: "256k" }, async (mount) => {
    writeFileSync(join(mount, "filler"), new Uint8Array(256 * 1024 - 4096));
    const db = join(mount, "svcd.sqlite");
    expectOneLineExit2(await runSvcd(["--port", "0", "--db", db]), db, "no space left");
  });
});

testUnless(tmpfsMissing())("a full disk and a database whose -shm file is gone: the one start that needs new space", async () => {
  await withTmpfs({ size: "1m" }, async (mount) => {
    const db = join(mount, "svcd.sqlite");
    const first = await spawnServer([BUN, MAIN, "--port", "0", "--db", db]);
    expect(await first.stop()).toBe(0);
    // What a copy of the database file alone, or a close by a program that deletes them, leaves.
    rmSync(`${db}-wal`);
    rmSync(`${db}-shm`);
    fillUp(join(mount, "filler"));
    const line = expectOneLineExit2(await runSvcd(["--port", "0", "--db", db]), db, "no space left", "-shm");
    expect(line).toContain("free some space");
  });
});
