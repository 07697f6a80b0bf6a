// A plain Node.js HTTP server that accepts only deliveries signed by svcd.
//
//   SVC_CURRENT_SIGNING_KEY=sig_... SVC_NEXT_SIGNING_KEY=sig_... node examples/node-receiver.mjs 3000
//
// PUBLIC_URL: the base URL svcd delivers to, when it is not this server's own address (behind a
// proxy or a tunnel); the signature names the exact URL svcd called. Each request is logged as a
// JSON line; anything not signed by svcd gets 401.
import { createServer } from "node:http";
import { verifySignature } from "svcd/verify"; // or a copy of src/signing/verify.js

const port = Number(process.argv[2] ?? process.env.PORT ?? 3000);

const server = createServer(async (req, res) => {
  // The raw bytes: the signature covers the body exactly as sent, so never re-serialize it first.
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const body = new Uint8Array(Buffer.concat(chunks));

  // A server started with --dialect upstash signs with Upstash-Signature and the issuer "Upstash".
  const upstash = req.headers["svc-signature"] === undefined && req.headers["upstash-signature"] !== undefined;
  const result = await verifySignature({
    signature: req.headers[upstash ? "upstash-signature" : "svc-signature"] ?? "",
    issuer: upstash ? "Upstash" : "Svc",
    body,
    currentSigningKey: process.env.SVC_CURRENT_SIGNING_KEY ?? "",
    nextSigningKey: process.env.SVC_NEXT_SIGNING_KEY ?? "",
    url: `${process.env.PUBLIC_URL ?? `http://${req.headers.host}`}${req.url}`,
  });
  console.log(JSON.stringify({ path: req.url, messageId: req.headers["svc-message-id"] ?? req.headers["upstash-message-id"] ?? null, verified: result.ok, reason: result.ok ? null : result.reason }));
  if (!result.ok) {
    res.writeHead(401, { "content-type": "text/plain" }).end(result.reason);
    return;
  }
  // Handle the message here: new TextDecoder().decode(body) is what the publisher sent.
  res.writeHead(200, { "content-type": "text/plain" }).end("ok");
});

server.listen(port, "127.0.0.1", () => console.log(`listening on ${server.address().port}`));
