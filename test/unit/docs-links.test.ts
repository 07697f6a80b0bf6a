import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";

/**
 * The documents link to each other's sections: a renamed heading or a moved file must not leave a
 * reader on a dead link. Anchors follow GitHub's rule (lowercase, punctuation dropped, spaces to
 * hyphens, a repeated heading gets `-1`, `-2`...); code blocks are neither headings nor links.
 */
const ROOT = new URL("../..", import.meta.url).pathname;
const FILES = ["README.md", "DEVELOPERS.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

const prose = (file: string) => readFileSync(join(ROOT, file), "utf8").replace(/^```[\s\S]*?^```/gm, "");

function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of prose(file).matchAll(/^#{1,6} (.*)$/gm)) {
    const slug = heading!.trim().toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, "").replaceAll(" ", "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

test("every relative link of README, DEVELOPERS and docs/ reaches a file, and its #anchor a heading there", () => {
  const broken: string[] = [];
  let checked = 0;
  for (const file of FILES) {
    for (const [, link] of prose(file).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^(https?|mailto):/.test(link!)) continue;
      checked++;
      const [path, anchor] = link!.split("#") as [string, string | undefined];
      const target = path ? normalize(join(dirname(file), path)) : file;
      if (!existsSync(join(ROOT, target))) broken.push(`${file}: ${link} (no such file)`);
      else if (anchor && target.endsWith(".md") && !anchorsOf(target).has(anchor)) broken.push(`${file}: ${link} (no such heading)`);
    }
  }
  expect(broken).toEqual([]);
  // The scan itself works: the documents do link to each other's sections.
  expect(checked).toBeGreaterThan(40);
});
