import { Elysia } from "elysia";
import { notFound } from "../core/errors.ts";
import type { StaticRoutes } from "../http/app.ts";
import consolePage from "./web/index.html";
import { apiDoc } from "../openapi/doc.ts";

export const CONSOLE_PATH = "/console";

/**
 * The console is one page app under `/console`. Bun bundles `web/` (Preact, uPlot, styles) from
 * this HTML import and serves the page and its hashed assets itself; `bun build --compile` embeds
 * the finished bundle in the executable, so nothing is fetched from anywhere else.
 */
export const consoleStaticRoutes: StaticRoutes = {
  [CONSOLE_PATH]: consolePage,
  [`${CONSOLE_PATH}/*`]: consolePage,
};

const wantsHtml = (request: Request) => (request.headers.get("accept") ?? "").includes("text/html");

/** `GET /`: a browser lands on the console; API clients keep the JSON 404 of an unknown path. */
export function consoleEntryRoutes() {
  return new Elysia().get(
    "/",
    ({ request, redirect }) => {
      if (!wantsHtml(request)) throw notFound("not found: GET /");
      return redirect(CONSOLE_PATH, 302);
    },
    {
      detail: apiDoc({
        summary: "A browser asking for / is sent to the web console at /console",
        security: [],
        responses: { 302: { description: "to /console (browsers; others get 404)" } },
      }),
    },
  );
}
