/**
 * The hosted service's rate-limit headers: `RateLimit-*` for the daily limit, `Burst-RateLimit-*`
 * for the per-second one (the official clients tell the two errors apart by which is present).
 * The reset is a Unix time in seconds.
 */
export function rateLimitHeaders(
  scope: "burst" | "daily",
  limit: number,
  remaining: number,
  resetAtMs: number,
): Record<string, string> {
  const prefix = scope === "burst" ? "Burst-RateLimit" : "RateLimit";
  return {
    [`${prefix}-Limit`]: String(limit),
    [`${prefix}-Remaining`]: String(remaining),
    [`${prefix}-Reset`]: String(Math.ceil(resetAtMs / 1000)),
  };
}
