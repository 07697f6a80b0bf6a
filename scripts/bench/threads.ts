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
