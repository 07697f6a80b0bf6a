/**
 * The PostgreSQL comparison's peers: pg-boss, graphile-worker and the Node.js 22 they want (the
 * `node` package). svcd neither runs nor tests with them, so they are no dependency of the
 * project: the bench installs them with npm on first use into a folder of their own
 * (`.bench-peers/`, git-ignored), once, and installs again only when the versions below change.
 * The drivers that use them (pg-boss-run.mjs, graphile-run.mjs and queue-driver.mjs) are copied
 * beside them before each run, so their imports find the peers installed there.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = new URL("../../", import.meta.url).pathname;
export const PEERS_DIR = join(ROOT, ".bench-peers");
/** What the comparison runs; a change here installs again. */
export const PEERS: Record<string, string> = { "pg-boss": "^12.38.0", "graphile-worker": "^0.18.0", node: "^22.23.3" };
const DRIVERS = ["queue-driver.mjs", "pg-boss-run.mjs", "graphile-run.mjs"];
/** Node 22 of the `node` package, which runs the drivers. */
export const PEER_NODE = join(PEERS_DIR, "node_modules", "node", "bin", "node");

const manifest = () => ({
  name: "svcd-bench-peers",
  private: true,
  description: "Installed by svcd's bench (scripts/bench/peers.ts): the peers of its PostgreSQL comparison.",
  dependencies: PEERS,
  // The `node` package fetches the Node binary of this platform in its install script.
  allowScripts: { node: true },
});

/** The installed version of a peer, or "not installed". */
export function peerVersion(name: string): string {
  try {
    return (JSON.parse(readFileSync(join(PEERS_DIR, "node_modules", name, "package.json"), "utf8")) as { version: string }).version;
  } catch {
    return "not installed";
  }
}

function installed(): boolean {
  try {
    const wanted = JSON.parse(readFileSync(join(PEERS_DIR, "package.json"), "utf8")) as { dependencies?: Record<string, string> };
    const same = JSON.stringify(wanted.dependencies) === JSON.stringify(PEERS);
    return same && Object.keys(PEERS).every((name) => peerVersion(name) !== "not installed") && existsSync(PEER_NODE);
  } catch {
    return false;
  }
}

/** Installs the peers unless they are there already; copies the drivers beside them. Returns the folder. */
export async function ensurePeers(log: (text: string) => void): Promise<string> {
  if (!installed()) {
    const npm = Bun.which("npm");
    if (!npm) throw new Error("npm is not on the PATH: the bench installs pg-boss and graphile-worker with it");
    log(`installing the PostgreSQL comparison's peers into ${PEERS_DIR} (once): ${Object.entries(PEERS).map(([n, v]) => `${n}@${v}`).join(", ")}`);
    mkdirSync(PEERS_DIR, { recursive: true });
    writeFileSync(join(PEERS_DIR, "package.json"), JSON.stringify(manifest(), null, 2) + "\n");
    // npm runs on the machine's Node; pg-boss and graphile-worker want 22 (they run on the `node`
    // package's), so npm's engine warnings about them say nothing here.
    const install = Bun.spawn([npm, "install", "--no-audit", "--no-fund", "--loglevel", "error"], { cwd: PEERS_DIR, stdout: "pipe", stderr: "pipe" });
    const [code, out, err] = await Promise.all([install.exited, new Response(install.stdout).text(), new Response(install.stderr).text()]);
    if (code !== 0 || !installed()) throw new Error(`npm install in ${PEERS_DIR} failed (exit ${code}): ${`${out}\n${err}`.trim().slice(-1500)}`);
  }
  for (const file of DRIVERS) copyFileSync(new URL(file, import.meta.url).pathname, join(PEERS_DIR, file));
  return PEERS_DIR;
}
