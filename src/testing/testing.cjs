"use strict";
/**
 * `svcd/testing`: one svcd per test file, for any test runner on Node.js or Bun (Vitest, Jest,
 * node:test, bun test), with Node built-ins only. Each instance is a child process on a free port
 * with a fresh in-memory store; it is stopped by stop(), and at the latest when this process exits.
 */
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { findSvcd } = require("./find-binary.cjs");

const UNITS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `"1h30m"`, `"90s"`, `"2d"`, `"250ms"` or a number of ms -> ms. */
function toMs(duration) {
  if (typeof duration === "number" && Number.isInteger(duration) && duration >= 0) return duration;
  const text = String(duration).trim();
  const parts = [...text.matchAll(/(\d+)(ms|s|m|h|d)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== text)
    throw new Error(`svcd: "${duration}" is not a duration (e.g. 1h30m, 90s, 250ms, or a number of ms)`);
  return parts.reduce((sum, [, n, unit]) => sum + Number(n) * UNITS[unit], 0);
}

const running = new Set();
let exitHookInstalled = false;
function killAllOnExit() {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const child of running) child.kill("SIGKILL");
  });
}

/** Reads the start banner: the URL and the `export NAME=value` lines of the first account. */
function readBanner(text) {
  const url = /svcd listening on (\S+)/.exec(text)?.[1];
  const env = {};
  const firstAccount = text.split(/\n# account /)[1] ?? "";
  const exports = firstAccount.split("\n\n")[0].matchAll(/^export ([A-Z0-9_]+)=(.*)$/gm);
  for (const [, name, value] of exports) env[name] = value;
  return { url, env };
}

/** Starts svcd and resolves once it listens; see testing.d.ts for the options and the handle. */
async function startSvcd(options = {}) {
  const { command, args } = findSvcd(options.binary);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svcd-testing-"));
  const flags = ["--port", "0", "--host", "127.0.0.1", "--memory", "--log-level", options.logLevel ?? "warn"];
  flags.push("--clock", options.clock ?? "real", "--dialect", options.dialect ?? "svc");
  if (options.config) {
    const file = path.join(dir, "config.json");
    fs.writeFileSync(file, JSON.stringify(options.config));
    flags.push("--config", file);
  }
  flags.push(...(options.args ?? []));
  // Its own folder: no .env or bunfig.toml of the caller's is read.
  const child = spawn(command, [...args, ...flags], {
    cwd: dir,
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  killAllOnExit();
  let output = "";
  child.stdout.on("data", (chunk) => (output = (output + chunk).slice(-64_000)));
  child.stderr.on("data", (chunk) => (output = (output + chunk).slice(-64_000)));
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal)));
  exited.then(() => {
    running.delete(child);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const banner = await new Promise((resolve, reject) => {
    const startTimeoutMs = options.startTimeoutMs ?? 30_000;
    const timer = setTimeout(() => fail(`did not start within ${startTimeoutMs} ms`), startTimeoutMs);
    const fail = (why) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new Error(`svcd ${why} (${[command, ...args].join(" ")}):\n${output}`));
    };
    child.once("error", (error) => fail(`could not be started: ${error.message}`));
    exited.then((code) => fail(`exited (${code}) before listening`));
    const check = () => {
      // The banner is one write that ends with the metrics token.
      if (!/export SVC_METRICS_TOKEN=.*\n/.test(output)) return;
      child.stdout.off("data", check);
      clearTimeout(timer);
      resolve(readBanner(output));
    };
    child.stdout.on("data", check);
  });
  // Left running, the child and its pipes must not keep the test runner alive.
  child.unref();
  child.stdout.unref?.();
  child.stderr.unref?.();
  return makeHandle({ child, exited, url: banner.url, env: banner.env, output: () => output });
}

function makeHandle({ child, exited, url, env, output }) {
  const token = env.SVC_TOKEN;
  const request = async (pathname, init = {}) => {
    const headers = new Headers(init.headers);
    if (!headers.has("authorization")) headers.set("authorization", `Bearer ${token}`);
    return fetch(url + pathname, { ...init, headers });
  };
  const json = async (pathname, init) => {
    const res = await request(pathname, init);
    const body = await res.text();
    if (!res.ok) throw new Error(`svcd: ${init?.method ?? "GET"} ${pathname} answered ${res.status}: ${body}`);
    return JSON.parse(body);
  };
  const post = (pathname, body) =>
    json(pathname, { method: "POST", body: body === undefined ? undefined : JSON.stringify(body) });
  /** Every page of a listing, following `cursor`. */
  const all = async (pathname, query, key) => {
    const items = [];
    let cursor;
    do {
      const params = new URLSearchParams(query);
      if (cursor) params.set("cursor", cursor);
      const page = await json(`${pathname}?${params}`);
      items.push(...(page[key] ?? []));
      cursor = page.cursor;
    } while (cursor);
    return items;
  };

  return {
    url,
    token,
    env,
    pid: child.pid,
    request,
    output,
    reset: () => post("/__svc/reset"),
    flush: ({ timeoutMs = 10_000 } = {}) => post(`/__svc/flush?timeout=${timeoutMs}`),
    advance: (duration, { flush = true, timeoutMs = 10_000 } = {}) =>
      post(`/__svc/clock/advance?flush=${flush}&timeout=${timeoutMs}`, { ms: toMs(duration) }),
    now: async () => (await json("/__svc/clock")).now,
    async waitForIdle({ timeoutMs = 10_000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        await post(`/__svc/flush?timeout=${Math.max(1, deadline - Date.now())}`);
        const status = await json("/__svc/status");
        const { inFlight, due, delayed } = status.messages;
        if (inFlight + due + delayed === 0) return status.messages;
        if (status.clock.mode === "manual" && inFlight + due === 0)
          throw new Error(
            `svcd: ${delayed} message(s) wait for a later time; with the manual clock only advance() brings them due`,
          );
        if (Date.now() > deadline)
          throw new Error(`svcd: not idle after ${timeoutMs} ms: ${JSON.stringify(status.messages)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    /** One entry per message, in publish order: its newest log entry and the states it went through. */
    async messages(filter = {}) {
      const { state, ...query } = filter;
      const byId = new Map();
      // The log is newest first: the first entry seen of a message is its current state.
      for (const entry of await all("/v2/logs", { ...query, count: "1000" }, "logs")) {
        const seen = byId.get(entry.messageId);
        if (seen) {
          seen.states.unshift(entry.state);
          seen.firstTime = entry.time;
          if (seen.body === undefined && entry.body !== undefined) seen.body = entry.body;
        } else byId.set(entry.messageId, { ...entry, states: [entry.state], firstTime: entry.time });
      }
      const messages = [...byId.values()].sort((a, b) => a.firstTime - b.firstTime).map(({ firstTime, ...m }) => m);
      return state ? messages.filter((m) => [state].flat().includes(m.state)) : messages;
    },
    dlq: (filter = {}) => all("/v2/dlq", { ...filter }, "messages"),
    async stop() {
      // Referenced again: the caller awaits the exit, so it must keep the event loop alive.
      child.ref();
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

module.exports = { startSvcd, toMs, findSvcd };
