/** Formatting shared by the pages: times, durations, counts, bodies. */

import { formatNumber } from "./locale.ts";

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/** `2026-11-23 16:37:30` in the browser's time zone; with `ms`, `.123` too. */
export function formatTime(ms: number | undefined, { millis = false } = {}): string {
  if (ms === undefined || ms === null || !Number.isFinite(ms)) return "—";
  const d = new Date(ms);
  const text = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return millis ? `${text}.${pad(d.getMilliseconds(), 3)}` : text;
}

/** `1d 2h`, `3m 5s`, `250 ms`: the two largest units. */
export function formatDuration(ms: number): string {
  const sign = ms < 0 ? "-" : "";
  let rest = Math.abs(Math.round(ms));
  if (rest < 1000) return `${sign}${rest} ms`;
  const units: Array<[string, number]> = [["d", 86_400_000], ["h", 3_600_000], ["m", 60_000], ["s", 1000]];
  const parts: string[] = [];
  for (const [unit, size] of units) {
    if (rest >= size || parts.length > 0) {
      const n = Math.floor(rest / size);
      rest -= n * size;
      if (n > 0 || parts.length > 0) parts.push(`${n}${unit}`);
    }
    if (parts.length === 2) break;
  }
  return sign + parts.filter((p) => !p.startsWith("0")).join(" ");
}

/** `in 3m 5s` / `12s ago` relative to the server's `now`. */
export function relative(ms: number | undefined, now: number): string {
  if (ms === undefined || ms === null) return "—";
  const delta = ms - now;
  if (Math.abs(delta) < 1000) return "now";
  return delta > 0 ? `in ${formatDuration(delta)}` : `${formatDuration(-delta)} ago`;
}

/** `1 entry`, `3 entries`. */
export const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

export const formatCount = (n: number | undefined) => (n === undefined ? "—" : formatNumber(n));

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

export function base64ToBytes(base64: string): Uint8Array {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export const textToBytes = (text: string) => new TextEncoder().encode(text);

/** The bytes as UTF-8 text, or null when they are not valid UTF-8 (show them as hex then). */
export function bytesToText(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

/** Classic hex dump: offset, 16 bytes in hex, their printable ASCII. */
export function hexDump(bytes: Uint8Array, limit = 64 * 1024): string {
  const lines: string[] = [];
  const end = Math.min(bytes.length, limit);
  for (let offset = 0; offset < end; offset += 16) {
    const row = bytes.subarray(offset, Math.min(offset + 16, end));
    const hex = Array.from(row, (b) => b.toString(16).padStart(2, "0")).join(" ");
    const ascii = Array.from(row, (b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : ".")).join("");
    lines.push(`${offset.toString(16).padStart(8, "0")}  ${hex.padEnd(47)}  ${ascii}`);
  }
  if (bytes.length > end) lines.push(`… ${bytes.length - end} more bytes`);
  return lines.join("\n");
}

/** Pretty JSON when the text is JSON, else the text. */
export function prettyText(text: string): string {
  const trimmed = text.trim();
  if (!trimmed.startsWith("{") && !trimmed.startsWith("[")) return text;
  try {
    return JSON.stringify(JSON.parse(trimmed), null, 2);
  } catch {
    return text;
  }
}

/** `<input type="datetime-local">` value ↔ Unix ms (the browser's time zone). */
export function toLocalInput(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
export function fromLocalInput(value: string): number | undefined {
  if (!value) return undefined;
  const ms = new Date(value).getTime();
  return Number.isFinite(ms) ? ms : undefined;
}

/** `1h30m`, `90s`, `2d`, `500ms`, bare milliseconds → ms; undefined when it does not parse. */
export function parseDuration(text: string): number | undefined {
  const value = text.trim();
  if (/^\d+$/.test(value)) return Number(value);
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  let total = 0;
  let matched = "";
  for (const m of value.matchAll(/(\d+)\s*(ms|s|m|h|d)/g)) {
    total += Number(m[1]) * units[m[2]!]!;
    matched += m[0];
  }
  return matched.replace(/\s/g, "") === value.replace(/\s/g, "") && matched ? total : undefined;
}
