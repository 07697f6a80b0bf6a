import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** One fenced code block of a Markdown document, as a reader sees it. */
export interface DocBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The info string's first word: `sh`, `ts`, `js`, `json`, ... ("" when none). */
  lang: string;
  code: string;
  /** `<!-- not run: reason -->` right above the fence: why the suite does not run it. */
  notRun?: string;
}

export const where = (b: DocBlock) => `${b.file}:${b.line}`;

/**
 * The fenced blocks of a document. A block (even one indented inside a list) is marked as not run
 * here by an HTML comment on the line right above its fence: `<!-- not run: <reason> -->`, or
 * `<!-- run by: <test file> -->` when another test runs it (that file must exist).
 */
export function extractBlocks(file: string, markdown: string): DocBlock[] {
  const lines = markdown.split("\n");
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,})\s*([\w-]*)/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, lang] = open as unknown as [string, string, string, string];
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !(lines[j]!.trim().startsWith(fence) && lines[j]!.trim() === fence); j++) {
      body.push(lines[j]!.startsWith(indent) ? lines[j]!.slice(indent.length) : lines[j]!);
    }
    const marker = /^\s*<!--\s*(not run|run by):\s*(.+?)\s*-->\s*$/.exec(lines[i - 1] ?? "");
    const notRun = marker && (marker[1] === "run by" ? `run by ${marker[2]}` : marker[2]);
    blocks.push({ file, line: i + 1, lang, code: body.join("\n") + "\n", notRun: notRun ?? undefined });
    i = j;
  }
  return blocks;
}

/** README.md, DEVELOPERS.md and every document of docs/, relative to the repository root. */
export function documentedBlocks(root: string): DocBlock[] {
  const docs = readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).sort();
  const files = ["README.md", "DEVELOPERS.md", ...docs.map((f) => `docs/${f}`)];
  return files.flatMap((file) => extractBlocks(file, readFileSync(join(root, file), "utf8")));
}

/** A sample's text with its own ports (3000, 3001) replaced by free ones: those may be taken here. */
export function withPorts(code: string, freePort: () => number): { code: string; ports: Record<string, number> } {
  const ports: Record<string, number> = {};
  return { code: code.replace(/\b300[01]\b/g, (p) => String((ports[p] ??= freePort()))), ports };
}

/** The `export NAME=value` lines a start printed for its `index`-th account. */
export function printedEnv(startOutput: string, index: number): Record<string, string> {
  const section = startOutput.split(/^# account /m).slice(1)[index];
  if (section === undefined) throw new Error(`no account ${index} in the start output`);
  const env: Record<string, string> = {};
  for (const [, name, value] of section.matchAll(/^export (\w+)=(\S+)$/gm)) env[name!] = value!;
  return env;
}

/** Runs `jobs` at most `limit` at a time; a job's failure is kept in its place, never thrown. */
export async function settleAll(jobs: Array<() => Promise<void>>, limit: number): Promise<unknown[]> {
  const errors: unknown[] = new Array(jobs.length).fill(null);
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < jobs.length; i = next++) await jobs[i]!().catch((e: unknown) => (errors[i] = e ?? "failed"));
  };
  await Promise.all(Array.from({ length: limit }, lane));
  return errors;
}
