import { ConfigError, parseCommandLine } from "./config/config.ts";
import { openServer, type Server } from "./server.ts";
import { printBanner } from "./banner.ts";
import { versionText } from "./startup/build-info.ts";
import { undoForFailedStart } from "./startup/created-files.ts";
import { startFailureLine } from "./startup/failure-line.ts";
import { checkHealth } from "./startup/health-check.ts";

function exitWith(message: string, code: number, stream: NodeJS.WriteStream = process.stderr): never {
  stream.write(message + "\n");
  process.exit(code);
}

let parsed;
try {
  parsed = parseCommandLine(process.argv.slice(2), process.env);
} catch (error) {
  if (error instanceof ConfigError) exitWith(`svcd: ${error.message}`, 2);
  throw error;
}
if (parsed.kind === "help") exitWith(parsed.text, 0, process.stdout);
if (parsed.kind === "version") exitWith(versionText(), 0, process.stdout);
if (parsed.kind === "health") {
  const { ok, line } = await checkHealth(parsed.url);
  exitWith(line, ok ? 0 : 1, ok ? process.stdout : process.stderr);
}

const config = parsed.config;
const undoCreated = undoForFailedStart(config.dbPath);
let server: Server | undefined;
let running;
try {
  server = await openServer(config);
  running = await server.start();
} catch (error) {
  // A failed start is one line and exit 2; the stack only when asked for. It leaves nothing
  // behind: a database it created (and its folders) goes again, once closed.
  if (config.logLevel === "debug") process.stderr.write(`${(error as Error)?.stack ?? error}\n`);
  try {
    await server?.storage.close();
    undoCreated();
  } catch {
    // What cannot be closed or removed stays; the start's own failure is what the line says.
  }
  exitWith(`svcd: ${startFailureLine(error)}`, 2);
}

let signals = 0;
const shutdown = (signal: string) => {
  signals++;
  if (signals > 1) exitWith(`svcd: second ${signal}, exiting now`, 130);
  server!.ctx.log.info("shutting down", { signal });
  server!.stop().then(() => process.exit(0));
};
process.on("SIGINT", () => shutdown("SIGINT"));
process.on("SIGTERM", () => shutdown("SIGTERM"));
// Only now: whoever reads "listening on" may stop the server at once, and a signal before its
// handler exists ends the process without a clean stop (exit 143).
printBanner(config, server.ctx, running, parsed.dev);
