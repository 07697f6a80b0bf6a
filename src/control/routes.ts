import { Elysia } from "elysia";

/** Health needs no credentials: it only says the store is open and the server answers. */
export function healthRoutes(state: { ready: () => boolean }) {
  return new Elysia().get("/__svc/health", ({ set }) => {
    if (!state.ready()) {
      set.status = 503;
      return { status: "starting" };
    }
    return { status: "ok" };
  });
}
