import { BENCH } from "./config.ts";

/** The 1 KB body every publish and baseline request carries (printable, so logs stay readable). */
export const BODY = new TextEncoder().encode(
  JSON.stringify({ data: "x".repeat(Math.max(0, BENCH.bodyBytes - 12)) }).slice(0, BENCH.bodyBytes),
);

export const BODY_HEADERS = { "content-type": "application/json" };
