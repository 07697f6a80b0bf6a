/**
 * The container image (Containerfile, `npm run build:image`) built and run with podman, as a
 * pipeline would: a publish through the container reaches a receiver on the host, data survives
 * in the /data volume, the health check answers, `svcd dev` serves the SDKs' dev credentials
 * through a published port, and two containers on one PostgreSQL act as one service. Podman runs
 * with runc and cgroupfs, and a containers.conf without default ulimits (what these machines
 * allow). Everything stays on loopback: host networking with SVC_HOST=127.0.0.1, or a port
 * published on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { freePort, freshDatabase } from "../helpers/postgres.ts";
import { waitUntil } from "../helpers/wait.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const PODMAN = Bun.which("podman");
const RUNC = Bun.which("runc");
const skipReason = !PODMAN ? "podman is not installed (apt-get install -y podman runc)" : !RUNC ? "runc is not installed (apt-get install -y runc)" : "";
const TAG = `localhost/svcd-test:${process.pid}`;
const GLOBALS = ["--runtime", "runc", "--cgroup-manager", "cgroupfs"];
const DEV_TOKEN = "eyJVc2VySUQiOiJkZWZhdWx0VXNlciIsIlBhc3N3b3JkIjoiZGVmYXVsdFBhc3N3b3JkIn0=";
let dir: string;
let env: Record<string, string>;
let rx: Receiver;
const containers: string[] = [];
const volume = `svcd-test-data-${process.pid}`;

function podman(...args: string[]) {
  const run = Bun.spawnSync([PODMAN!, ...GLOBALS, ...args], { env, stdout: "pipe", stderr: "pipe" });
  return { exit: run.exitCode, out: run.stdout.toString().trim(), err: run.stderr.toString() };
}

/** Starts a container in the background and waits for its server to answer health at `url`. */
async function runContainer(name: string, url: string, args: string[]) {
  const started = podman("run", "-d", "--name", name, ...args);
  if (started.exit !== 0) throw new Error(`podman run ${name}: ${started.err}`);
  containers.push(name);
  await waitUntil(() => fetch(`${url}/__svc/health`).then((r) => r.ok, () => false), { timeoutMs: 30_000, what: `${name} at ${url}` }).catch((error) => {
    throw new Error(`${error.message}\n${podman("logs", name).out}${podman("logs", name).err}`);
  });
}

beforeAll(async () => {
  if (skipReason) return;
  dir = mkdtempSync(join(tmpdir(), "svcd-image-"));
  writeFileSync(join(dir, "containers.conf"), "[containers]\ndefault_ulimits = []\n");
  env = { ...process.env, CONTAINERS_CONF: join(dir, "containers.conf") } as Record<string, string>;
  const build = Bun.spawn([process.execPath, "scripts/build-image.ts", "--tool", PODMAN!, "--tag", TAG], {
    cwd: ROOT,
    env: { ...env, CONTAINER_TOOL_OPTIONS: GLOBALS.join(" ") },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [exit, out, err] = await Promise.all([build.exited, new Response(build.stdout).text(), new Response(build.stderr).text()]);
  if (exit !== 0) throw new Error(`build:image failed (${exit}):\n${out}${err}`);
  rx = await startReceiver();
}, 300_000);

afterAll(() => {
  if (skipReason) return;
  rx?.stop();
  for (const name of containers) podman("rm", "-f", "-t", "2", name);
  podman("volume", "rm", "-f", volume);
  podman("rmi", "-f", TAG);
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!!skipReason)(`the container image${skipReason ? ` (skipped: ${skipReason})` : ""}`, () => {
  test("the image: FROM scratch around the binary, a non-root user, the /data volume, a health check, settings as variables", () => {
    const image = JSON.parse(podman("image", "inspect", TAG).out)[0];
    const config = image.Config;
    expect(config.User).toBe("10001:10001");
    expect(Object.keys(config.Volumes)).toEqual(["/data"]);
    expect(config.Entrypoint).toEqual(["/usr/local/bin/svcd"]);
    expect(config.Cmd ?? null).toBeNull();
    expect(config.Env).toEqual(expect.arrayContaining(["SVC_HOST=0.0.0.0", "SVC_DB=/data/svcd.sqlite"]));
    // The OCI labels: the license, the version, the commit it was built from.
    const revision = Bun.spawnSync(["git", "rev-parse", "HEAD"], { cwd: ROOT }).stdout.toString().trim();
    expect(config.Labels).toMatchObject({
      "org.opencontainers.image.licenses": "MIT",
      "org.opencontainers.image.version": pkg.version,
      "org.opencontainers.image.revision": revision,
    });
    // podman shows the docker format's health check beside Config, docker inside it.
    expect((image.Healthcheck ?? config.Healthcheck).Test).toEqual(["CMD", "/usr/local/bin/svcd", "health"]);
    // Nothing but the binary, its libraries and a few files: no shell to run.
    expect(podman("run", "--rm", "--entrypoint", "/bin/sh", TAG, "-c", "true").exit).not.toBe(0);
  });

  test("a publish through the container reaches the host's receiver; the health check passes; the volume keeps the data", async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const args = ["--network", "host", "-e", "SVC_HOST=127.0.0.1", "-e", `SVC_PORT=${port}`, "-e", "SVC_TOKEN=image-token", "-v", `${volume}:/data`, TAG];
    await runContainer("svcd-test-a", url, args);
    const auth = { authorization: "Bearer image-token" };
    const res = await fetch(`${url}/v2/publish/${rx.url}/from-container`, { method: "POST", body: "hello from the image", headers: auth });
    expect(res.status).toBe(200);
    const { messageId } = (await res.json()) as { messageId: string };
    const [delivery] = await rx.waitFor(1, { match: (r) => r.path === "/from-container" });
    expect(delivery!.text).toBe("hello from the image");
    expect(podman("healthcheck", "run", "svcd-test-a").exit).toBe(0);
    expect(podman("exec", "svcd-test-a", "/usr/local/bin/svcd", "health").out).toBe(`svcd health: ok (${url}/__svc/health)`);

    // A new container on the same volume finds the message's history.
    expect(podman("stop", "-t", "10", "svcd-test-a").exit).toBe(0);
    await runContainer("svcd-test-b", url, args);
    const logs = (await (await fetch(`${url}/v2/logs?messageId=${messageId}`, { headers: auth })).json()) as { logs: Array<{ state: string }> };
    expect(logs.logs[0]?.state).toBe("DELIVERED");
    podman("stop", "-t", "10", "svcd-test-b");
  }, 120_000);

  test("svcd dev in the container answers on a port published on loopback (it listens on 0.0.0.0 inside)", async () => {
    const port = await freePort();
    await runContainer("svcd-test-dev", `http://127.0.0.1:${port}`, ["-p", `127.0.0.1:${port}:8080`, TAG, "dev"]);
    const keys = await fetch(`http://127.0.0.1:${port}/v2/keys`, { headers: { authorization: `Bearer ${DEV_TOKEN}` } });
    expect(await keys.json()).toEqual({ current: "sig_7kYjw48mhY7kAjqNGcy6cr29RJ6r", next: "sig_5ZB6DVzB1wjE8S6rZ7eenA8Pdnhs" });
    expect(podman("logs", "svcd-test-dev").out).toContain("database: in memory  dialect: upstash");
  }, 60_000);

  test("two containers on one PostgreSQL act as one service (the compose example's shape)", async () => {
    const db = await freshDatabase();
    const [p1, p2] = [await freePort(), await freePort()];
    const node = (name: string, port: number) =>
      runContainer(name, `http://127.0.0.1:${port}`, ["--network", "host", "-e", "SVC_HOST=127.0.0.1", "-e", `SVC_PORT=${port}`, "-e", `SVC_DB=${db}`, TAG]);
    await node("svcd-test-pg1", p1);
    await node("svcd-test-pg2", p2);
    const auth = { authorization: "Bearer svcd_dev_token" };
    const res = await fetch(`http://127.0.0.1:${p1}/v2/publish/${rx.url}/cluster`, { method: "POST", body: "one service", headers: auth });
    const { messageId } = (await res.json()) as { messageId: string };
    await rx.waitFor(1, { match: (r) => r.path === "/cluster" });
    // The other node reads the same history.
    const state = await waitUntil(async () => {
      const logs = (await (await fetch(`http://127.0.0.1:${p2}/v2/logs?messageId=${messageId}`, { headers: auth })).json()) as { logs: Array<{ state: string }> };
      return logs.logs[0]?.state === "DELIVERED" && logs.logs[0].state;
    }, { what: "the delivery in node two's log" });
    expect(state).toBe("DELIVERED");
  }, 120_000);
});
