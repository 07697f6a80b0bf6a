/** Durations written as `<digits><unit>` groups (`50s`, `10m`, `1d10h30m`), as used by publish headers. */

export class DurationError extends Error {
  override name = "DurationError";
}

const UNIT_MS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

const GROUP = /(\d+)([a-z]*)/y;

/**
 * Parses a compound duration into milliseconds. `allowedUnits` lists the unit letters accepted
 * (a subset of "smhd"), so that e.g. a timeout can refuse days while a delay accepts them.
 */
export function parseDuration(text: string, allowedUnits = "smhd"): number {
  const src = text.trim();
  if (src === "") throw new DurationError("empty duration");
  let total = 0;
  GROUP.lastIndex = 0;
  while (GROUP.lastIndex < src.length) {
    const at = GROUP.lastIndex;
    const match = GROUP.exec(src);
    if (match === null) {
      throw new DurationError(`invalid duration "${src}": unexpected "${src[at]}" at position ${at + 1}`);
    }
    const [, digits = "", unit = ""] = match;
    if (unit === "" && GROUP.lastIndex < src.length) {
      const pos = GROUP.lastIndex;
      throw new DurationError(`invalid duration "${src}": unexpected "${src[pos]}" at position ${pos + 1}`);
    }
    if (unit === "") {
      throw new DurationError(`invalid duration "${src}": number ${digits} needs a unit (${unitList(allowedUnits)})`);
    }
    const unitMs = UNIT_MS[unit];
    if (unitMs === undefined || !allowedUnits.includes(unit)) {
      throw new DurationError(`invalid duration "${src}": unit "${unit}" is not one of ${unitList(allowedUnits)}`);
    }
    total += Number(digits) * unitMs;
    if (!Number.isSafeInteger(total)) throw new DurationError(`duration "${src}" is too large`);
  }
  return total;
}

function unitList(allowedUnits: string): string {
  return [...allowedUnits].filter((u) => u in UNIT_MS).join(" ");
}

/** A bare non-negative integer counts as seconds (as in `Retry-After`); anything else is a duration. */
export function parseSecondsOrDuration(text: string): number {
  const src = text.trim();
  if (/^\d+$/.test(src)) {
    const ms = Number(src) * 1_000;
    if (!Number.isSafeInteger(ms)) throw new DurationError(`duration "${src}" is too large`);
    return ms;
  }
  return parseDuration(src);
}

/** Human-readable form for messages: 90061000 → "1d1h1m1s", 1500 → "1s500ms", 0 → "0s". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms < 0) return `-${formatDuration(-ms)}`;
  let rest = Math.round(ms);
  let out = "";
  for (const [unit, size] of [["d", 86_400_000], ["h", 3_600_000], ["m", 60_000], ["s", 1_000]] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) out += `${n}${unit}`;
    rest -= n * size;
  }
  if (rest > 0) out += `${rest}ms`;
  return out === "" ? "0s" : out;
}
