import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { openLiveStream, type StreamState } from "./live-stream.ts";

/**
 * Live views. While live updates are on, the shell keeps a stream of the account's message
 * events open (`GET /__svc/events`) and every view re-reads what it shows shortly after a change;
 * views also poll: every few seconds while the stream is down (the fallback), rarely while it is
 * open (for what no message event announces: a queue paused elsewhere, keys rotated). Every view
 * re-reads at once after an action.
 */
const state = { live: true, stream: "closed" as StreamState };
const liveListeners = new Set<() => void>();
const refreshListeners = new Set<() => void>();
const emitLive = () => liveListeners.forEach((fn) => fn());

/** How soon after an event the views re-read (a burst of events becomes one read), and how often at most. */
const EVENT_DELAY_MS = 100;
const MIN_GAP_MS = 500;
/** The poll of a view while the stream is open. */
const STREAMING_POLL_MS = 5000;

export const isLive = () => state.live;
export function setLive(live: boolean): void {
  state.live = live;
  emitLive();
}
/** Every view re-reads now (after a publish, a retry, a clock advance...). */
export function refreshAll(): void {
  lastRefresh = Date.now();
  for (const fn of refreshListeners) fn();
}

let lastRefresh = 0;
let pending: ReturnType<typeof setTimeout> | undefined;
/** A message event arrived: re-read soon, once for a burst, not more than every MIN_GAP_MS. */
function changed(): void {
  if (pending || document.visibilityState !== "visible") return;
  const wait = Math.max(EVENT_DELAY_MS, lastRefresh + MIN_GAP_MS - Date.now());
  pending = setTimeout(() => {
    pending = undefined;
    refreshAll();
  }, wait);
}

export function useLive(): { live: boolean; stream: StreamState } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const update = () => setTick((n) => n + 1);
    liveListeners.add(update);
    return () => void liveListeners.delete(update);
  }, []);
  return { live: state.live, stream: state.stream };
}

/** Keeps the event stream open while live updates are on (the shell uses it once). */
export function useLiveStream(): void {
  const { live } = useLive();
  useEffect(() => {
    if (!live) return;
    const close = openLiveStream({
      onChange: changed,
      onState: (s) => {
        state.stream = s;
        emitLive();
      },
    });
    const onVisible = () => document.visibilityState === "visible" && refreshAll();
    document.addEventListener("visibilitychange", onVisible);
    return () => {
      close();
      document.removeEventListener("visibilitychange", onVisible);
    };
  }, [live]);
}

export interface Polled<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  refresh: () => void;
}

/**
 * Reads `load()` now, whenever `key` changes, on every refresh, and every `everyMs` while live
 * (every `streamingMs` while the event stream is open). A refresh while a read is under way runs
 * once that read is done, so a burst of refreshes never piles up requests.
 */
export function usePoll<T>(load: () => Promise<T>, key: string, everyMs = 2000, streamingMs = STREAMING_POLL_MS): Polled<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const loadRef = useRef(load);
  loadRef.current = load;
  const generation = useRef(0);
  const busy = useRef(false);
  const again = useRef(false);
  const { live, stream } = useLive();

  /** `fresh`: the key changed, so a read under way is outdated and this one starts now. */
  const run = useCallback((fresh: boolean) => {
    if (busy.current && !fresh) {
      again.current = true;
      return;
    }
    const mine = ++generation.current;
    busy.current = true;
    again.current = false;
    loadRef
      .current()
      .then(
        (value) => {
          if (mine !== generation.current) return;
          setData(value);
          setError(undefined);
        },
        (err: Error) => {
          if (mine === generation.current) setError(err);
        },
      )
      .finally(() => {
        if (mine !== generation.current) return;
        setLoading(false);
        busy.current = false;
        if (again.current) run(false);
      });
  }, []);
  const refresh = useCallback(() => run(false), [run]);

  useEffect(() => {
    setLoading(true);
    setData(undefined);
    run(true);
  }, [key]);

  const interval = stream === "open" ? Math.max(everyMs, streamingMs) : everyMs;
  useEffect(() => {
    refreshListeners.add(refresh);
    if (!live || everyMs <= 0) return () => void refreshListeners.delete(refresh);
    const timer = setInterval(() => {
      if (document.visibilityState === "visible") refresh();
    }, interval);
    return () => {
      clearInterval(timer);
      refreshListeners.delete(refresh);
    };
  }, [key, live, interval]);

  return { data, error, loading, refresh };
}
