import { expect } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_ACCOUNT } from "../../src/config/config.ts";
import { printedEnv, where, type DocBlock } from "./doc-samples.ts";
import { BUN, MAIN, spawnServer, type ServerProcess } from "./process.ts";
import { startSample, startSinkProxy, type SampleProcess } from "./sample-process.ts";

/** Bash with curl reporting every answer's status on stderr, the sample's own output untouched. */
const SHELL_PRELUDE = `curl() { command curl -sS -w '%{stderr}[status %{http_code} %{url_effective}]\\n' "$@"; }\n`;

/**
 * Where the documented samples run: a reader's project folder that depends on svcd and the
 * official SDKs, one svcd in the `svc` dialect with a manual clock and an account per sample
 * (its public destinations answered by a local proxy, so nothing leaves the machine), and one in
 * the `upstash` dialect with the real clock for the SDKs' samples.
 */
export async function startSampleWorld(root: string, sampleAccounts: number) {
  const dir = mkdtempSync(join(tmpdir(), "svcd-docs-"));
  const project = join(dir, "project");
  mkdirSync(join(project, "node_modules"), { recursive: true });
  writeFileSync(join(project, "package.json"), '{ "name": "docs-samples", "private": true, "type": "module" }\n');
  symlinkSync(root, join(project, "node_modules/svcd"));
  symlinkSync(join(root, "node_modules/@upstash"), join(project, "node_modules/@upstash"));

  const proxy = startSinkProxy();
  const samples = Array.from({ length: sampleAccounts }, (_, i) => ({
    email: `sample-${i + 1}@svcd.local`,
    apiKey: `sample-${i + 1}-key`,
    userId: `sample-${i + 1}`,
    token: `sample-${i + 1}-token`,
    // "One of your vector indexes", which the usage sample records for.
    vectorIndexes: [{ name: "existing", region: "us-central1", similarityFunction: "COSINE", dimensionCount: 8 }],
  }));
  // The first account is the default one, whose printed lines the README shows.
  writeFileSync(join(dir, "accounts.json"), JSON.stringify({ accounts: [DEFAULT_ACCOUNT, ...samples] }));
  const viaProxy = { HTTP_PROXY: proxy.url, HTTPS_PROXY: proxy.url, NO_PROXY: "127.0.0.1,localhost" };
  const start = (db: string, ...flags: string[]) =>
    [BUN, MAIN, "--port", "0", "--db", join(dir, db), "--log-level", "warn", ...flags];
  const [svcd, upstash] = await Promise.all([
    spawnServer(start("svcd.sqlite", "--clock", "manual", "--config", join(dir, "accounts.json")), {
      env: viaProxy,
      timeoutMs: 60_000,
    }),
    spawnServer(start("upstash.sqlite", "--dialect", "upstash"), { timeoutMs: 60_000 }),
  ]);
  const accountEnvs = Array.from({ length: sampleAccounts }, (_, i) => printedEnv(svcd.output(), i + 1));
  const started: SampleProcess[] = [];

  const api = (server: ServerProcess, token: string, path: string, init: RequestInit = {}) => {
    const headers = { authorization: `Bearer ${token}`, ...(init.headers as object) };
    return fetch(server.url + path, { ...init, headers });
  };

  /** Runs a sample in the project's folder, with only the environment it is given (and a PATH). */
  function run(cmd: string[], env: Record<string, string>, cwd = project): SampleProcess {
    const path = `${join(root, "node_modules/.bin")}:${process.env.PATH}`;
    const sample = startSample(cmd, { cwd, env: { PATH: path, HOME: dir, LANG: "C.UTF-8", ...env } });
    started.push(sample);
    return sample;
  }

  async function runShell(block: DocBlock, env: Record<string, string>) {
    const sample = run(["bash", "-c", SHELL_PRELUDE + block.code], env);
    const code = await sample.exited;
    const reported = sample.stderr().matchAll(/\[status (\d+) (\S*)\]/g);
    const statuses = [...reported].map((m) => ({ status: Number(m[1]), url: m[2]! }));
    return { sample, code, statuses };
  }

  let nextAccount = 0;
  return {
    dir,
    proxy,
    svcd,
    upstash,
    api,
    run,
    runShell,
    writeSample(name: string, code: string): string {
      writeFileSync(join(project, name), code);
      return join(project, name);
    },
    /** An account of the `svc` server no other sample uses: its printed variables, after a reset. */
    async freshAccount(): Promise<Record<string, string>> {
      const env = accountEnvs[nextAccount++];
      if (!env) throw new Error("more samples than accounts: raise the sample accounts");
      expect((await api(svcd, env.SVC_TOKEN!, "/__svc/reset", { method: "POST" })).status).toBe(200);
      return env;
    },
    async stop() {
      for (const sample of started) sample.stop();
      await Promise.all([svcd.stop(), upstash.stop()]);
      proxy.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type SampleWorld = Awaited<ReturnType<typeof startSampleWorld>>;
export type ShellRun = Awaited<ReturnType<SampleWorld["runShell"]>>;

/** What every `sh` sample must do: run to its end, every request answered 2XX (or 404, below). */
export function expectRanClean(r: ShellRun, block: DocBlock) {
  const what = `${where(block)}\n${r.sample.stdout()}\n${r.sample.stderr()}`;
  expect(r.code, what).toBe(0);
  expect(r.sample.stderr(), what).not.toMatch(/command not found|curl: \(\d+\)/);
  if (block.code.includes("curl")) expect(r.statuses.length, what).toBeGreaterThan(0);
  // A placeholder id (msg_..., the DLQ id 1795327501123-0) gets 404; anything else is a broken sample.
  const placeholder = (url: string) => url.includes("...") || url.includes("1795327501123-0");
  const answered = ({ status, url }: { status: number; url: string }) =>
    (status >= 200 && status < 300) || (status === 404 && placeholder(url));
  const broken = r.statuses.filter((s) => !answered(s));
  expect(broken, what).toEqual([]);
}
