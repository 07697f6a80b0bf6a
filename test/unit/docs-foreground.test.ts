import { expect, test } from "bun:test";
import { documentedBlocks, where } from "../helpers/doc-samples.ts";

/**
 * A reader pastes a shell block as a whole: a command that starts svcd in the foreground keeps
 * the shell until the server stops, so nothing written after it in the same block runs (the
 * quick start once ran `npm test` after `npm start`). Such a block may list other ways to start
 * svcd after it (alternatives), never another command.
 */
const ROOT = new URL("../..", import.meta.url).pathname;

/** A command line that serves in the foreground: npm/bun start, the binary, npx, a container. */
const STARTS = /^(?:\S+=\S+\s+)*(?:npm start|bun start|npx svcd|(?:\.\/)?dist\/svcd|svcd|podman run|docker run)\b/;
/** ...unless it asks something and ends (a version, a health check), runs detached, or in the background. */
const ENDS = /\s(?:--version|-v|health|-d|--detach)(?:\s|$)|&$/;

/** The block's commands in order, those chained on one line (`a && b`, `a; b`) one by one. */
const commandsOf = (code: string) =>
  code
    .split("\n")
    .map((line) => line.replace(/(^|\s+)#.*$/, "").trim())
    .flatMap((line) => line.split(/\s*(?:&&|\|\||;)\s*/))
    .filter((command) => command !== "");

const startsInForeground = (command: string) => STARTS.test(command) && !ENDS.test(command);

test("no shell block of README, DEVELOPERS or docs/ runs a command after one that starts svcd in the foreground", () => {
  const blocks = documentedBlocks(ROOT).filter((b) => b.lang === "sh" || b.lang === "bash");
  const stuck: string[] = [];
  let starting = 0;
  for (const block of blocks) {
    const commands = commandsOf(block.code);
    const first = commands.findIndex(startsInForeground);
    if (first < 0) continue;
    starting++;
    for (const command of commands.slice(first + 1)) if (!startsInForeground(command)) stuck.push(`${where(block)}: ${command}`);
  }
  expect(stuck).toEqual([]);
  // The scan finds the blocks that start svcd (the quick start, the container, dev mode...).
  expect(starting).toBeGreaterThan(4);
});
