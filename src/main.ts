import { ConfigError, parseCommandLine } from "./config/config.ts";
import { createServer } from "./server.ts";
import { printBanner } from "./banner.ts";
import pkg from "../package.json" with { type: "json" };

function exitWith(message: string, code: number): never {
  process.stderr.write(message + "\n");
  process.exit(code);
}

let parsed;
try {
  parsed = parseCommandLine(process.argv.slice(2), process.env);
} catch (error) {
  if (error instanceof ConfigError) exitWith(`svcd: ${error.message}`, 2);
  throw error;
}
if (parsed.kind === "help") exitWith(parsed.text, 0);
if (parsed.kind === "version") exitWith(`svcd ${pkg.version}`, 0);

const config = parsed.config;
let server;
try {
  server = createServer(config);
} catch (error) {
  if (error instanceof ConfigError) exitWith(`svcd: ${error.message}`, 2);
  throw error;
}
const running = await server.start();
printBanner(config, server.ctx, running);

let signals = 0;
const shutdown = (signal: string) => {
  signals++;
  if (signals > 1) exitWith(`svcd: second ${signal}, exiting now`, 130);
  server.ctx.log.info("shutting down", { signal });
  server.stop().then(() => process.exit(0));
};
process.on("SIGINT", () => shutdown("SIGINT"));
process.on("SIGTERM", () => shutdown("SIGTERM"));
