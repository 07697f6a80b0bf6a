import { useCallback, useEffect, useRef, useState } from "preact/hooks";

/**
 * Live views poll svcd's APIs: every page re-reads what it shows every few seconds while the tab
 * is visible and live updates are on, and at once after an action changed something.
 */
const state = { live: true };
const liveListeners = new Set<() => void>();
const refreshListeners = new Set<() => void>();

export const isLive = () => state.live;
export function setLive(live: boolean): void {
  state.live = live;
  for (const fn of liveListeners) fn();
}
/** Every view re-reads now (after a publish, a retry, a clock advance...). */
export function refreshAll(): void {
  for (const fn of refreshListeners) fn();
}

export function useLive(): boolean {
  const [live, set] = useState(state.live);
  useEffect(() => {
    const update = () => set(state.live);
    liveListeners.add(update);
    return () => void liveListeners.delete(update);
  }, []);
  return live;
}

export interface Polled<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  refresh: () => void;
}

/** Reads `load()` now, whenever `key` changes, and every `everyMs` while live. */
export function usePoll<T>(load: () => Promise<T>, key: string, everyMs = 2000): Polled<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const loadRef = useRef(load);
  loadRef.current = load;
  const generation = useRef(0);
  const live = useLive();

  const refresh = useCallback(() => {
    const mine = ++generation.current;
    loadRef.current().then(
      (value) => {
        if (mine !== generation.current) return;
        setData(value);
        setError(undefined);
        setLoading(false);
      },
      (err: Error) => {
        if (mine !== generation.current) return;
        setError(err);
        setLoading(false);
      },
    );
  }, []);

  useEffect(() => {
    setLoading(true);
    setData(undefined);
    refresh();
  }, [key]);

  useEffect(() => {
    refreshListeners.add(refresh);
    if (!live || everyMs <= 0) return () => void refreshListeners.delete(refresh);
    const timer = setInterval(() => {
      if (document.visibilityState === "visible") refresh();
    }, everyMs);
    return () => {
      clearInterval(timer);
      refreshListeners.delete(refresh);
    };
  }, [key, live, everyMs]);

  return { data, error, loading, refresh };
}
