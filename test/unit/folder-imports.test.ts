import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/**
 * The import graph of `src/` folders: no folder imports another that imports it back (directly
 * or around a loop), and the shared low layers import no domain folder. A domain's logic can
 * then be read, tested and replaced (a second storage engine) without dragging the rest along.
 */
const SRC = resolve(import.meta.dir, "../../src");
const LOW_LAYERS = new Set(["core", "util", "store", "config", "accounts", "context", "model", "metrics", "http"]);

function folderGraph(): Map<string, Map<string, string[]>> {
  const graph = new Map<string, Map<string, string[]>>();
  const folderOf = (file: string) => {
    const parts = relative(SRC, file).split("/");
    return parts.length > 1 ? parts[0]! : "(root)";
  };
  for (const entry of readdirSync(SRC, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
    const file = join(entry.parentPath, entry.name);
    const from = folderOf(file);
    for (const [, spec] of readFileSync(file, "utf8").matchAll(/^(?:import|export)\b[^;]*?\sfrom\s+"(\.[^"]+)"/gms)) {
      const target = resolve(dirname(file), spec!);
      if (!target.startsWith(SRC + "/")) continue;
      const to = folderOf(target);
      if (to === from) continue;
      const edges = graph.get(from) ?? new Map<string, string[]>();
      graph.set(from, edges);
      edges.set(to, [...(edges.get(to) ?? []), `${relative(SRC, file)} -> ${relative(SRC, target)}`]);
    }
  }
  return graph;
}

test("no import loops between folders of src/", () => {
  const graph = folderGraph();
  const loops: string[] = [];
  const path: string[] = [];
  const done = new Set<string>();
  const visit = (folder: string) => {
    const at = path.indexOf(folder);
    if (at >= 0) {
      const loop = [...path.slice(at), folder];
      const why = loop.slice(0, -1).map((f, i) => graph.get(f)!.get(loop[i + 1]!)![0]);
      loops.push(`${loop.join(" -> ")} (${why.join("; ")})`);
      return;
    }
    if (done.has(folder)) return;
    path.push(folder);
    for (const next of graph.get(folder)?.keys() ?? []) visit(next);
    path.pop();
    done.add(folder);
  };
  for (const folder of graph.keys()) visit(folder);
  expect(loops).toEqual([]);
});

test("the low layers import no domain folder", () => {
  const wrong: string[] = [];
  for (const [from, edges] of folderGraph()) {
    if (!LOW_LAYERS.has(from)) continue;
    for (const [to, why] of edges) if (!LOW_LAYERS.has(to)) wrong.push(`${from} -> ${to}: ${why.join("; ")}`);
  }
  expect(wrong).toEqual([]);
});
