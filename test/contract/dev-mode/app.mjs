/**
 * A user's app written for the official SDKs' dev mode: it sets no URL, token or signing key, only
 * QSTASH_DEV=true (and QSTASH_DEV_PORT). `node app.mjs full` publishes with @upstash/qstash's
 * Client, verifies the delivery with its Receiver, and runs a workflow through @upstash/workflow's
 * serve() and Client; it prints one JSON line of what it saw. `node app.mjs probe` only asks the
 * SDK to find (or fetch) its dev server. `node app.mjs serve` only serves a workflow at /workflow
 * (it greets `requestPayload.name`), prints `listening on <port>` and waits to be stopped.
 */
import http from "node:http";
import { Client, Receiver, startDevServer } from "@upstash/qstash";
import { Client as WorkflowClient, serve } from "@upstash/workflow";

if (process.argv[2] === "probe") {
  await startDevServer();
  process.exit(0);
}

/** Hands a Node request to a fetch handler: the body byte for byte, as svcd signed it. */
async function toFetch(handler, req, res, url) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const body = chunks.length ? Buffer.concat(chunks) : undefined;
  const response = await handler(new Request(url, { method: req.method, headers: req.headers, body: req.method === "GET" ? undefined : body }));
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
}

if (process.argv[2] === "serve") {
  const { handler: greeting } = serve(async (context) => await context.run("greet", () => `hello ${context.requestPayload.name}`));
  const server = http.createServer((req, res) => toFetch(greeting, req, res, `http://127.0.0.1:${server.address().port}${req.url}`));
  server.listen(0, "127.0.0.1", () => console.log(`listening on ${server.address().port}`));
  await new Promise(() => {});
}

const deadline = setTimeout(() => {
  console.error("app: gave up after 60 s");
  process.exit(3);
}, 60_000);

const receiver = new Receiver();
const seen = { delivery: null, workflow: null, unsignedWorkflowStatus: null };
let resolveDelivery, resolveWorkflow;
const delivered = new Promise((r) => (resolveDelivery = r));
const workflowDone = new Promise((r) => (resolveWorkflow = r));

const { handler: workflow } = serve(async (context) => {
  const plusOne = await context.run("plus-one", () => context.requestPayload.n + 1);
  const doubled = await context.run("double", () => plusOne * 2);
  await context.run("report", () => resolveWorkflow(doubled));
});

const server = http.createServer(async (req, res) => {
  const url = `http://127.0.0.1:${server.address().port}${req.url}`;
  if (req.url !== "/hook") return toFetch(workflow, req, res, url);
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const body = Buffer.concat(chunks).toString();
  const signature = req.headers["upstash-signature"];
  const verified = await receiver.verify({ signature, body, url });
  const tampered = await receiver.verify({ signature, body: body + " ", url }).catch(() => false);
  seen.delivery = { body, verified, tampered };
  res.end("ok");
  resolveDelivery();
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const base = `http://127.0.0.1:${server.address().port}`;

const client = new Client();
const { messageId } = await client.publishJSON({ url: `${base}/hook`, body: { hello: "dev mode" } });
await delivered;

// serve() checks signatures against the dev keys: a request svcd did not sign is turned away.
const unsigned = await fetch(`${base}/wf`, { method: "POST", body: JSON.stringify({ n: 1 }), headers: { "content-type": "application/json" } });
seen.unsignedWorkflowStatus = unsigned.status;

const workflowClient = new WorkflowClient();
const { workflowRunId } = await workflowClient.trigger({ url: `${base}/wf`, body: { n: 20 } });
const result = await workflowDone;
// The run ends once svcd has the answer to its last step: ask its log until it says so.
let state;
while (state !== "RUN_SUCCESS") {
  await new Promise((r) => setTimeout(r, 50));
  state = (await workflowClient.logs({ workflowRunId })).runs[0]?.workflowState;
}
seen.workflow = { workflowRunId, result, state };

clearTimeout(deadline);
console.log(JSON.stringify({ messageId, ...seen }));
server.close();
process.exit(0);
