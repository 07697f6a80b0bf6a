#!/usr/bin/env node
"use strict";
/**
 * `npx svcd`: starts the prebuilt svcd of this platform (from its `@svcd/<os>-<arch>` optional
 * dependency), passing the arguments, the standard streams, the exit status and the signals
 * through. Node built-ins only.
 */
const { spawn } = require("node:child_process");
const { findSvcd } = require("../src/testing/find-binary.cjs");

let found;
try {
  found = findSvcd();
} catch (error) {
  process.stderr.write(`${error.message}\n`);
  process.exit(2);
}
const child = spawn(found.command, [...found.args, ...process.argv.slice(2)], { stdio: "inherit" });
// svcd stops cleanly on SIGINT/SIGTERM: whoever stops this process stops svcd the same way.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
child.on("error", (error) => {
  process.stderr.write(`svcd: could not start ${found.command}: ${error.message}\n`);
  process.exit(2);
});
child.on("exit", (code, signal) => process.exit(code ?? (signal === "SIGINT" ? 130 : 143)));
