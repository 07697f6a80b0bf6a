/**
 * Waiting with a wall-clock limit. The limit is how long an HTTP caller is kept waiting, not
 * domain time, so it uses real timers even when the server's clock is manual (a manual clock
 * would never reach the deadline).
 */
export async function withDeadline(work: Promise<unknown>, limitMs: number): Promise<boolean> {
  if (limitMs <= 0) return false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), limitMs);
  });
  try {
    return await Promise.race([work.then(() => true), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** One turn of the event loop: lets queued writes commit and their continuations run. */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
