/**
 * Preloaded (`node --import`) into a user's app: every connection to a host other than loopback
 * fails at once and is written to $NO_INTERNET_LOG, so a test sees any download the SDK tries.
 * Every TCP and TLS client of Node (http, https, fetch) ends in net.Socket#connect, which takes
 * the host name before resolving it.
 */
import { appendFileSync } from "node:fs";
import dns from "node:dns";
import net from "node:net";

const log = process.env.NO_INTERNET_LOG;
if (!log) throw new Error("no-internet.mjs: NO_INTERNET_LOG is not set");

const isLoopback = (host) =>
  host === undefined || host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);

function refused(what) {
  appendFileSync(log, `${what}\n`);
  return Object.assign(new Error(`connection to ${what} refused: this process may only reach loopback`), { code: "ECONNREFUSED" });
}

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  let options = Array.isArray(args[0]) ? args[0][0] : args[0];
  if (typeof options !== "object" || options === null) options = { port: args[0], host: typeof args[1] === "string" ? args[1] : undefined };
  if (!options.path && !isLoopback(options.host)) {
    const error = refused(`${options.host}:${options.port}`);
    process.nextTick(() => this.destroy(error));
    return this;
  }
  return connect.apply(this, args);
};

const lookup = dns.lookup;
dns.lookup = function (host, ...rest) {
  if (isLoopback(host)) return lookup.call(this, host, ...rest);
  const callback = rest.at(-1);
  const error = refused(`dns ${host}`);
  process.nextTick(() => callback(error));
};
