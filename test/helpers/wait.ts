/** Polls `check` until it returns a truthy value or the deadline passes (then throws with `what`). */
export async function waitUntil<T>(
  check: () => T | Promise<T>,
  { timeoutMs = 10_000, intervalMs = 10, what = "condition" } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(intervalMs);
  }
}
