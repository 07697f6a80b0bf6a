import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import type { BackgroundService } from "../core/service.ts";
import { BIN_COUNT, binOf, emptySummary, quantile, type LatencySummary } from "./histogram.ts";
import { LEVELS, mergePart, Part, type RollupStorage, type RollupWrite } from "./storage.ts";
import { gridEndMin, MINUTE_MS, monthGrid, periodGrid, type Grid } from "./time.ts";
import type { UsageRecorder } from "./usage.ts";
import type { WriteTx } from "../store/transactor.ts";

interface Cell {
  owner: string;
  metric: string;
  minute: number;
  part: number;
  value: number;
  atMs: number;
}

/** Parts per minute of one metric (bins included), so that minute and part make one number. */
const PARTS_PER_MINUTE = Part.bin0 + BIN_COUNT;

/**
 * Cells by owner, metric, then minute and part as one number: recording a count is three map
 * lookups by strings the caller already holds, instead of building a key string per count.
 */
class Cells {
  private readonly byOwner = new Map<string, Map<string, Map<number, Cell>>>();
  size = 0;

  get(owner: string, metric: string, minute: number, part: number): Cell | undefined {
    return this.byOwner.get(owner)?.get(metric)?.get(minute * PARTS_PER_MINUTE + part);
  }

  add(cell: Cell): void {
    let metrics = this.byOwner.get(cell.owner);
    if (!metrics) this.byOwner.set(cell.owner, (metrics = new Map()));
    let cells = metrics.get(cell.metric);
    if (!cells) metrics.set(cell.metric, (cells = new Map()));
    cells.set(cell.minute * PARTS_PER_MINUTE + cell.part, cell);
    this.size++;
  }

  *values(): Generator<Cell> {
    for (const metrics of this.byOwner.values()) for (const cells of metrics.values()) yield* cells.values();
  }
}

export interface MetricsEngineOptions {
  flushEveryMs?: number;
  pruneEveryMs?: number;
  log?: Logger;
}

/**
 * The one usage-metrics engine. Recording only touches an in-memory map keyed by
 * (owner, metric, minute, part); a timer flushes it to every rollup level in one transaction,
 * and every read flushes first so a statistics request sees activity of the same instant.
 */
export class MetricsEngine implements UsageRecorder, BackgroundService {
  readonly name = "usage metrics";
  private pending = new Cells();
  private cancelPrune: (() => void) | null = null;
  private cancelFlush: (() => void) | null = null;
  private stopped = false;
  private readonly flushEveryMs: number;
  private readonly pruneEveryMs: number;

  constructor(
    private readonly store: RollupStorage,
    private readonly clock: Clock,
    private readonly opts: MetricsEngineOptions = {},
  ) {
    this.flushEveryMs = opts.flushEveryMs ?? 1000;
    this.pruneEveryMs = opts.pruneEveryMs ?? 3_600_000;
  }

  /**
   * Prunes now and every `pruneEveryMs`. The flush timer is armed only while something is pending,
   * so a manual clock jumping a year ahead does not fire a flush for every idle second.
   */
  start(): void {
    const prune = () => {
      if (this.stopped) return;
      this.prune().catch((error) => {
        // A locked or full database must not end the process from a timer; the next run prunes.
        this.opts.log?.error("usage metrics prune failed; trying again at the next run", { error: String(error) });
      });
      this.cancelPrune = this.clock.at(this.clock.now() + this.pruneEveryMs, prune);
    };
    prune();
  }

  /** Flushes what is pending; recording afterwards writes through (late deliveries at shutdown). */
  stop(): void {
    this.stopped = true;
    this.cancelPrune?.();
    this.cancelFlush?.();
    void this.flush();
  }

  count(owner: string, metric: string, value: number, atMs: number): void {
    if (!Number.isFinite(value) || value === 0) return;
    this.add(owner, metric, atMs, Part.sum, value);
  }

  countStored(tx: WriteTx, owner: string, metric: string, value: number, atMs: number): void {
    tx.afterCommit((committed) => {
      if (committed) this.count(owner, metric, value, atMs);
    });
  }

  /** One latency sample, in ms. */
  observe(owner: string, metric: string, latencyMs: number, atMs: number): void {
    if (!Number.isFinite(latencyMs) || latencyMs < 0) return;
    this.add(owner, metric, atMs, Part.sum, latencyMs);
    this.add(owner, metric, atMs, Part.count, 1);
    this.add(owner, metric, atMs, Part.max, latencyMs);
    this.add(owner, metric, atMs, Part.min, latencyMs);
    this.add(owner, metric, atMs, Part.bin0 + binOf(latencyMs), 1);
  }

  /** A level (vector count, data size): the newest value wins and holds until the next one. */
  gauge(owner: string, metric: string, value: number, atMs: number): void {
    if (!Number.isFinite(value)) return;
    this.add(owner, metric, atMs, Part.gauge, value);
  }

  private add(owner: string, metric: string, atMs: number, part: number, value: number): void {
    const minute = Math.floor(atMs / MINUTE_MS);
    const cell = this.pending.get(owner, metric, minute, part);
    if (cell) {
      cell.value = mergePart(part, cell.value, cell.atMs, value, atMs);
      cell.atMs = Math.max(cell.atMs, atMs);
    } else this.pending.add({ owner, metric, minute, part, value, atMs });
    if (this.stopped) void this.flush();
    else this.armFlush();
  }

  private armFlush(): void {
    if (this.cancelFlush) return;
    this.cancelFlush = this.clock.at(this.clock.now() + this.flushEveryMs, () => {
      this.cancelFlush = null;
      void this.flush();
    });
  }

  /** Writes what is pending; resolves once it is stored (or kept for the next flush when that failed). */
  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const cells = this.pending;
    this.pending = new Cells();
    // Merge minutes into every level in memory first: a coarse bucket becomes one upsert.
    const rows = new Map<string, RollupWrite>();
    for (const c of cells.values()) {
      for (const res of LEVELS) {
        const bucket = Math.floor(c.minute / res) * res;
        const key = `${c.owner}\0${c.metric}\0${res}\0${bucket}\0${c.part}`;
        const row = rows.get(key);
        if (row) {
          row.value = mergePart(c.part, row.value, row.atMs, c.value, c.atMs);
          row.atMs = Math.max(row.atMs, c.atMs);
        } else rows.set(key, { owner: c.owner, metric: c.metric, res, bucket, part: c.part, value: c.value, atMs: c.atMs });
      }
    }
    try {
      await this.store.write([...rows.values()]);
    } catch (error) {
      this.keep(cells, error);
    }
  }

  /**
   * Nothing was written (one transaction): keep the counts for the next flush, so a locked or
   * full database delays the statistics instead of losing the usage.
   */
  private keep(cells: Cells, error: unknown): void {
    for (const c of cells.values()) {
      const newer = this.pending.get(c.owner, c.metric, c.minute, c.part);
      if (newer) {
        newer.value = mergePart(c.part, c.value, c.atMs, newer.value, newer.atMs);
        newer.atMs = Math.max(c.atMs, newer.atMs);
      } else this.pending.add(c);
    }
    this.opts.log?.error("usage metrics flush failed; kept for the next flush", { error: String(error), cells: cells.size });
    if (!this.stopped) this.armFlush();
  }

  /**
   * Drops rollups older than both the 30-day grid and the current month (daily series), keeping
   * the newest value of each gauge.
   */
  prune(): Promise<number> {
    const now = this.clock.now();
    const cutoff = Math.min(periodGrid("30d", now).startMin, monthGrid(now).startMin);
    return this.store.prune(cutoff);
  }

  /** Removes everything recorded for an owner (a deleted index), inside the write `tx` that deletes it. */
  async forget(tx: WriteTx, owner: string): Promise<void> {
    // Not awaited: the counts go in a transaction of their own (written at once on SQLite).
    void this.flush();
    await this.store.deleteOwner(tx, owner);
  }

  /** Sum of the metric per grid point. */
  async sums(owner: string, metric: string, grid: Grid): Promise<number[]> {
    const out = new Array<number>(grid.points).fill(0);
    for (const row of await this.rows(owner, metric, grid)) {
      if (row.part === Part.sum) out[this.pointOf(grid, row.bucket)]! += row.value;
    }
    return out;
  }

  /** Total over the whole grid. */
  async total(owner: string, metric: string, grid: Grid): Promise<number> {
    return (await this.sums(owner, metric, grid)).reduce((a, b) => a + b, 0);
  }

  /** Mean and 99th percentile per grid point (0 where there was no sample). */
  async latency(owner: string, metric: string, grid: Grid): Promise<{ mean: number[]; p99: number[] }> {
    const summaries = Array.from({ length: grid.points }, emptySummary);
    for (const row of await this.rows(owner, metric, grid)) addPart(summaries[this.pointOf(grid, row.bucket)]!, row.part, row.value);
    return {
      mean: summaries.map((s) => (s.count > 0 ? s.sum / s.count : 0)),
      p99: summaries.map((s) => quantile(s, 0.99)),
    };
  }

  /** Gauge per grid point: the newest value in the point, else the one before it (0 if never set). */
  async gauges(owner: string, metric: string, grid: Grid): Promise<number[]> {
    const level = levelFor(grid);
    const newest = Array.from<{ value: number; at: number } | undefined>({ length: grid.points });
    for (const row of await this.rows(owner, metric, grid)) {
      if (row.part !== Part.gauge) continue;
      const i = this.pointOf(grid, row.bucket);
      if (!newest[i] || row.at_ms >= newest[i]!.at) newest[i] = { value: row.value, at: row.at_ms };
    }
    let carry = (await this.store.gaugeBefore(owner, metric, level, grid.startMin)) ?? 0;
    return newest.map((p) => (carry = p ? p.value : carry));
  }

  /** The gauge's newest value, 0 if never set. */
  async latest(owner: string, metric: string): Promise<number> {
    await this.flush();
    return (await this.store.gaugeBefore(owner, metric, 1440, Number.MAX_SAFE_INTEGER)) ?? 0;
  }

  private async rows(owner: string, metric: string, grid: Grid) {
    await this.flush();
    return this.store.range(owner, metric, levelFor(grid), grid.startMin, gridEndMin(grid));
  }

  private pointOf(grid: Grid, bucket: number): number {
    return Math.floor((bucket - grid.startMin) / grid.stepMin);
  }
}

/** The coarsest stored level whose buckets tile the grid's steps exactly. */
export function levelFor(grid: Grid): number {
  for (let i = LEVELS.length - 1; i >= 0; i--) {
    const res = LEVELS[i]!;
    if (grid.stepMin % res === 0 && grid.startMin % res === 0) return res;
  }
  return 1;
}

function addPart(s: LatencySummary, part: number, value: number): void {
  if (part === Part.sum) s.sum += value;
  else if (part === Part.count) s.count += value;
  else if (part === Part.max) s.max = Math.max(s.max, value);
  else if (part === Part.min) s.min = Math.min(s.min, value);
  else if (part >= Part.bin0) {
    const bin = part - Part.bin0;
    s.bins.set(bin, (s.bins.get(bin) ?? 0) + value);
  }
}
