import { badRequest } from "../core/errors.ts";

export const MINUTE_MS = 60_000;
export const DAY_MIN = 1440;
const DAY_MS = DAY_MIN * MINUTE_MS;

/** Statistics periods (docs/management-api.md, Periods): the step is the window divided by the point count. */
export const PERIODS = {
  "1h": { stepMin: 1, points: 60 },
  "3h": { stepMin: 3, points: 60 },
  "12h": { stepMin: 12, points: 60 },
  "1d": { stepMin: 24, points: 60 },
  "3d": { stepMin: 72, points: 60 },
  "7d": { stepMin: 168, points: 60 },
  "30d": { stepMin: 180, points: 240 },
} as const;
export type Period = keyof typeof PERIODS;
export const PERIOD_NAMES = Object.keys(PERIODS) as Period[];

export function parsePeriod(raw: string | undefined): Period {
  if (raw === undefined) return "1h";
  if (Object.hasOwn(PERIODS, raw)) return raw as Period;
  throw badRequest(`invalid period "${raw}": must be one of ${PERIOD_NAMES.join(", ")}`);
}

/** Consecutive buckets of `stepMin` minutes starting at Unix minute `startMin`. */
export interface Grid {
  startMin: number;
  stepMin: number;
  points: number;
}

/** Buckets aligned to the step since the Unix epoch, oldest first, the last one holding now. */
export function periodGrid(period: Period, nowMs: number): Grid {
  const { stepMin, points } = PERIODS[period];
  const lastStart = Math.floor(nowMs / MINUTE_MS / stepMin) * stepMin;
  return { startMin: lastStart - (points - 1) * stepMin, stepMin, points };
}

export function dayGrid(firstDayMs: number, days: number): Grid {
  return { startMin: Math.floor(startOfUtcDay(firstDayMs) / MINUTE_MS), stepMin: DAY_MIN, points: days };
}

export const gridEndMin = (g: Grid) => g.startMin + g.points * g.stepMin;
export const pointStartMs = (g: Grid, i: number) => (g.startMin + i * g.stepMin) * MINUTE_MS;

export const startOfUtcDay = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;
export function startOfUtcMonth(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}
export function daysInUtcMonth(ms: number): number {
  const d = new Date(ms);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
}

/** Every day of the month that holds `nowMs`, future days included. */
export const monthGrid = (nowMs: number) => dayGrid(startOfUtcMonth(nowMs), daysInUtcMonth(nowMs));

const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
/** English weekday name, as Go's `time.Weekday.String()`. */
export const weekdayName = (ms: number) => WEEKDAYS[new Date(ms).getUTCDay()]!;

/** Period points: `2024-05-01 12:34:00.000 +0000 UTC` (always three fraction digits). */
export function formatPeriodTime(ms: number): string {
  return new Date(ms).toISOString().replace("T", " ").replace("Z", " +0000 UTC");
}

/** Daily points: Go's default `time.Time` text, the fraction's trailing zeros (and dot) dropped. */
export function formatGoTime(ms: number): string {
  const iso = new Date(ms).toISOString();
  const fraction = iso.slice(20, 23).replace(/0+$/, "");
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction ? "." + fraction : ""} +0000 UTC`;
}
