import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";

/**
 * Rules of the house the code keeps: a source file can be read in one sitting (at most 300
 * lines), and no cast tells the compiler to stop checking (`as unknown as`, `as never`): the
 * types say what the code does.
 */
const SRC = resolve(import.meta.dir, "../../src");
const MAX_LINES = 300;

function sources(): Array<{ path: string; text: string }> {
  return readdirSync(SRC, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(ts|tsx)$/.test(e.name) && !e.name.endsWith(".d.ts"))
    .map((e) => {
      const file = join(e.parentPath, e.name);
      return { path: relative(SRC, file), text: readFileSync(file, "utf8") };
    });
}

test(`no file in src/ has more than ${MAX_LINES} lines`, () => {
  const long = sources()
    .map(({ path, text }) => ({ path, lines: text.split("\n").length - (text.endsWith("\n") ? 1 : 0) }))
    .filter((f) => f.lines > MAX_LINES)
    .map((f) => `${f.path}: ${f.lines} lines`);
  expect(long).toEqual([]);
});

test("no cast in src/ silences the type checker (as unknown as, as never)", () => {
  const casts = sources().flatMap(({ path, text }) =>
    text
      .split("\n")
      .flatMap((line, i) => (/\bas unknown as\b|\bas never\b/.test(line) ? [`${path}:${i + 1}: ${line.trim()}`] : [])),
  );
  expect(casts).toEqual([]);
});
