import { storedToken } from "./token.ts";

/**
 * The account's message events from `GET /__svc/events` (server-sent events). It is read with
 * `fetch` rather than `EventSource`, which cannot send the token in a header (a token in the URL
 * would reach logs). Each event, or a burst of them, calls `onChange`; a stream that ends or fails
 * is opened again after a pause that grows while it keeps failing.
 */
export type StreamState = "connecting" | "open" | "closed";

export interface StreamOptions {
  onChange: () => void;
  onState: (state: StreamState) => void;
}

const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;

export function openLiveStream({ onChange, onState }: StreamOptions): () => void {
  let stopped = false;
  let abort: AbortController | null = null;
  let retryMs = FIRST_RETRY_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const connect = async () => {
    if (stopped) return;
    onState("connecting");
    abort = new AbortController();
    try {
      const token = storedToken();
      const res = await fetch("/__svc/events", { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: abort.signal });
      if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const event = /^event: (.*)$/m.exec(buffer.slice(0, end))?.[1];
          buffer = buffer.slice(end + 2);
          if (event === "ready") {
            retryMs = FIRST_RETRY_MS;
            onState("open");
          }
          if (event) onChange();
        }
      }
    } catch {
      // Closed by us, refused, or the server went away: polling carries on meanwhile.
    }
    if (stopped) return;
    onState("closed");
    timer = setTimeout(connect, retryMs);
    retryMs = Math.min(MAX_RETRY_MS, retryMs * 2);
  };

  void connect();
  return () => {
    stopped = true;
    clearTimeout(timer);
    abort?.abort();
    onState("closed");
  };
}
