import { expect } from "bun:test";

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  types: Map<string, string>;
  samples: Sample[];
  /** The value of the sample with this name and exactly these labels (0 when absent). */
  value(name: string, labels?: Record<string, string>): number;
}

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: \\d+)?$`);
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/gy;
const SUFFIXES = ["_bucket", "_sum", "_count", "_total", ""];

/**
 * Parses the Prometheus text exposition format (0.0.4) strictly: every sample belongs to a family
 * declared by `# TYPE` before it, label sets are well-formed, values are numbers, and histogram
 * buckets are cumulative and end with `+Inf` equal to `_count`. Fails the test otherwise.
 */
export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const meta = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
    if (meta) {
      expect(meta[2]).toMatch(new RegExp(`^${NAME}$`));
      if (meta[1] === "TYPE") {
        expect(["counter", "gauge", "histogram", "summary", "untyped"]).toContain(meta[3] ?? "");
        types.set(meta[2]!, meta[3]!);
      }
      continue;
    }
    expect(line.startsWith("#")).toBe(false);
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    if (match[2]) {
      LABEL.lastIndex = 0;
      let consumed = 0;
      for (let m = LABEL.exec(match[2]); m; m = LABEL.exec(match[2])) {
        labels[m[1]!] = m[2]!.replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\");
        consumed = LABEL.lastIndex;
      }
      if (consumed !== match[2].length) throw new Error(`malformed labels: ${line}`);
    }
    const value = match[3] === "+Inf" ? Infinity : match[3] === "-Inf" ? -Infinity : Number(match[3]);
    if (Number.isNaN(value) && match[3] !== "NaN") throw new Error(`not a number: ${line}`);
    const family = SUFFIXES.map((s) => (s && match[1]!.endsWith(s) ? match[1]!.slice(0, -s.length) : match[1]!)).find((f) => types.has(f));
    if (!family) throw new Error(`sample without a # TYPE before it: ${line}`);
    samples.push({ name: match[1]!, labels, value });
  }
  checkHistograms(types, samples);
  const key = (labels: Record<string, string>) => JSON.stringify(Object.entries(labels).sort());
  return {
    types,
    samples,
    value: (name, labels = {}) => samples.find((s) => s.name === name && key(s.labels) === key(labels))?.value ?? 0,
  };
}

function checkHistograms(types: Map<string, string>, samples: Sample[]): void {
  for (const [family, type] of types) {
    if (type !== "histogram") continue;
    const series = new Map<string, Sample[]>();
    for (const s of samples.filter((s) => s.name === `${family}_bucket`)) {
      const { le, ...rest } = s.labels;
      const id = JSON.stringify(rest);
      series.set(id, [...(series.get(id) ?? []), s]);
    }
    for (const [id, buckets] of series) {
      const values = buckets.map((b) => b.value);
      expect(values).toEqual([...values].sort((a, b) => a - b));
      expect(buckets.at(-1)!.labels.le).toBe("+Inf");
      const count = samples.find((s) => s.name === `${family}_count` && JSON.stringify(s.labels) === id);
      expect(count?.value).toBe(buckets.at(-1)!.value);
    }
  }
}
