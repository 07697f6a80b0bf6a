import type { WorkerWaits } from "./clock-control.ts";

/** What time control reads of one flow-control lane (as the delivery workers report it). */
export interface LaneSnapshot {
  waiting: number;
  active: number;
  rate?: number;
  rateCount: number;
  periodStart: number;
  periodMs: number;
  /** Paused through the API: its waiting attempts wait for a resume, at no instant. */
  paused: boolean;
}

/**
 * Attempts held by the workers' flow-control rate windows, and when the first is released: a
 * lane at its rate lets the next one start when its oldest counted start is a period old. Lanes
 * that wait for parallelism are not held for a time: they wait for their active deliveries.
 * A paused lane's attempts are held too (a flush does not wait for them), until a resume.
 */
export function rateWindowWaits(stats: () => Promise<LaneSnapshot[]>): WorkerWaits {
  return async () => {
    let parked = 0;
    let nextAt: number | null = null;
    for (const lane of await stats()) {
      if (lane.paused) {
        parked += lane.waiting;
        continue;
      }
      if (lane.waiting === 0 || lane.rate === undefined || lane.rateCount < lane.rate) continue;
      parked += lane.waiting;
      const releaseAt = lane.periodStart + lane.periodMs;
      if (nextAt === null || releaseAt < nextAt) nextAt = releaseAt;
    }
    return { parked, nextAt };
  };
}
