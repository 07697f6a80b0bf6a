/**
 * Summarises a V8/JSC `.cpuprofile` (from `bun --cpu-prof`): the functions with the most self
 * time and the most inclusive time, as a share of all samples. Used to write the "where the time
 * goes" notes of BENCHMARKS.md.
 *
 *   bun scripts/bench/profile-summary.ts <file.cpuprofile> [top]
 */
interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

export function summarise(profile: Profile, top = 25) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = (n: Node) => {
    const file = n.callFrame.url.replace(/^.*\/(src|node_modules)\//, "$1/");
    return `${n.callFrame.functionName || "(anonymous)"} ${file ? `${file}:${n.callFrame.lineNumber + 1}` : ""}`.trim();
  };
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let all = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    all += dt;
    const node = byId.get(id);
    if (!node) return;
    self.set(label(node), (self.get(label(node)) ?? 0) + dt);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const l = label(byId.get(cur)!);
      if (seen.has(l)) continue;
      seen.add(l);
      total.set(l, (total.get(l) ?? 0) + dt);
    }
  });
  const rank = (m: Map<string, number>) =>
    [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top).map(([name, t]) => ({ name, pct: (100 * t) / all }));
  return { totalMs: all / 1000, self: rank(self), inclusive: rank(total) };
}

if (import.meta.main) {
  const file = process.argv[2]!;
  const top = Number(process.argv[3] ?? 25);
  const s = summarise(JSON.parse(await Bun.file(file).text()), top);
  console.log(`total sampled ${s.totalMs.toFixed(0)} ms`);
  console.log("\nself time:");
  for (const r of s.self) console.log(`${r.pct.toFixed(1).padStart(5)}%  ${r.name}`);
  console.log("\ninclusive time:");
  for (const r of s.inclusive) console.log(`${r.pct.toFixed(1).padStart(5)}%  ${r.name}`);
}
