/**
 * CPU time per thread of a process (Linux /proc/<pid>/task/<tid>/stat), to see which thread of
 * svcd a measurement keeps busy: the main thread (HTTP, SQLite), the delivery workers, Bun's
 * HTTP client thread, the checkpointer, the garbage collector.
 */
import { readdirSync, readFileSync } from "node:fs";

const TICK_MS = 10; // USER_HZ = 100 on Linux

export type ThreadTimes = Map<string, { name: string; ms: number }>;

export function threadTimes(pid: number): ThreadTimes {
  const out: ThreadTimes = new Map();
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      const name = stat.slice(stat.indexOf("(") + 1, close);
      const fields = stat.slice(close + 2).split(" ");
      // fields[0] is the state (stat field 3): utime and stime are stat fields 14 and 15.
      const ms = (Number(fields[11]) + Number(fields[12])) * TICK_MS;
      out.set(tid, { name, ms });
    } catch {
      // the thread ended in between
    }
  }
  return out;
}

/** CPU ms used per thread name between two snapshots, biggest first. */
export function threadDelta(before: ThreadTimes, after: ThreadTimes): Array<{ name: string; ms: number }> {
  const byName = new Map<string, number>();
  for (const [tid, t] of after) {
    const used = t.ms - (before.get(tid)?.ms ?? 0);
    const name = tid === [...after.keys()][0] ? `${t.name} (main)` : t.name;
    byName.set(name, (byName.get(name) ?? 0) + used);
  }
  return [...byName.entries()].map(([name, ms]) => ({ name, ms })).filter((t) => t.ms > 0).sort((a, b) => b.ms - a.ms);
}

function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null; // gone
  }
}

/** CPU ms a process has used, all its threads (and, with `children`, its children it waited for). */
export function processCpuMs(pid: number, children = false): number {
  const f = statFields(pid);
  if (!f) return 0;
  // After the state (stat field 3): utime, stime, cutime, cstime are fields 14–17.
  const own = Number(f[11]) + Number(f[12]);
  return (own + (children ? Number(f[13]) + Number(f[14]) : 0)) * TICK_MS;
}

/**
 * CPU ms of a whole PostgreSQL server: the postmaster, its live backends and helpers, and what its
 * ended children used (counted into the postmaster's cutime/cstime when it reaped them).
 */
export function serverTreeCpuMs(rootPid: number): number {
  let total = processCpuMs(rootPid, true);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const f = statFields(Number(entry));
    if (f && Number(f[1]) === rootPid) total += processCpuMs(Number(entry));
  }
  return total;
}

/** The machine's CPU time so far (every core): idle (idle and iowait) and in all, in clock ticks. */
export function machineCpuTicks(): { idle: number; total: number } {
  const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!;
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is counted in user already)
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return { idle: f[3]! + f[4]!, total };
}
