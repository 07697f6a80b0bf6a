import { formatGoTime, formatPeriodTime, pointStartMs, type Grid } from "./time.ts";

/** A point of a statistics series (docs/management-api.md). */
export interface Point {
  x: string;
  y: number;
}

/** A period series: `x` with three fraction digits. */
export const periodPoints = (grid: Grid, values: number[]): Point[] =>
  values.map((y, i) => ({ x: formatPeriodTime(pointStartMs(grid, i)), y }));

/** A daily series: `x` in Go's default time format. */
export const dailyPoints = (grid: Grid, values: number[]): Point[] =>
  values.map((y, i) => ({ x: formatGoTime(pointStartMs(grid, i)), y }));

export const addSeries = (a: number[], b: number[]) => a.map((v, i) => v + b[i]!);
