/**
 * The publish baseline: a bare Bun.serve answering a fixed JSON body, shaped like a publish
 * answer, in its own process (as svcd is).
 */
const FIXED = JSON.stringify({ messageId: "msg_26hZCxZCuWyyTWPmSVBrNCtiJEYj", url: "http://127.0.0.1:1/p" });

const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  idleTimeout: 0,
  fetch() {
    return new Response(FIXED, { headers: { "content-type": "application/json" } });
  },
});

console.log(`bare listening on http://127.0.0.1:${server.port}`);
