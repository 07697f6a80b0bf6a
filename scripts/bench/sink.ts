/**
 * The delivery sink, run as its own process so it never shares an event loop with svcd or the
 * load generator. Answers 200 "ok" at once and stamps each arrival with a cross-process wall
 * clock (stats.ts wallNow), keyed by the message id svcd sends (or X-Bench-Id for raw requests).
 *
 *   GET  /__sink/stats     {count, firstAt, lastAt}
 *   GET  /__sink/arrivals  {ids: [...], times: [...]}  (since the last reset)
 *   POST /__sink/reset
 */
import { wallNow } from "./stats.ts";

let count = 0;
let firstAt = 0;
let lastAt = 0;
let ids: string[] = [];
let times: number[] = [];

const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  idleTimeout: 0,
  fetch(request) {
    const url = request.url;
    const at = url.indexOf("/__sink/");
    if (at >= 0) {
      const what = url.slice(at + 8);
      if (what.startsWith("stats")) return Response.json({ count, firstAt, lastAt });
      if (what.startsWith("arrivals")) return Response.json({ ids, times });
      if (what.startsWith("reset")) {
        count = firstAt = lastAt = 0;
        ids = [];
        times = [];
        return new Response("reset");
      }
    }
    const t = wallNow();
    if (count === 0) firstAt = t;
    lastAt = t;
    count++;
    const id = request.headers.get("svc-message-id") ?? request.headers.get("x-bench-id");
    if (id !== null) {
      ids.push(id);
      times.push(t);
    }
    return new Response("ok");
  },
});

console.log(`sink listening on http://127.0.0.1:${server.port}`);
