import { useEffect, useState } from "preact/hooks";

/** Client-side routes under /console; the server answers every such path with the same page. */
export const BASE = "/console";

export interface Route {
  /** Path below the base, e.g. `/messages/msg_1`; `/` for the overview. */
  path: string;
  query: URLSearchParams;
}

const listeners = new Set<() => void>();
const current = (): Route => {
  const rest = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : "/";
  return { path: rest.replace(/\/+$/, "") || "/", query: new URLSearchParams(location.search) };
};

export function href(path: string, query?: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v) params.set(k, v);
  const qs = params.toString();
  return `${BASE}${path === "/" ? "" : path}${qs ? `?${qs}` : ""}`;
}

export function navigate(to: string, { replace = false } = {}): void {
  if (to === location.pathname + location.search) return;
  if (replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  window.scrollTo(0, 0);
  for (const fn of listeners) fn();
}

addEventListener("popstate", () => {
  for (const fn of listeners) fn();
});

export function useRoute(): Route {
  const [route, setRoute] = useState(current);
  useEffect(() => {
    const update = () => setRoute(current());
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return route;
}

/** Same-page navigation for plain left clicks; modified clicks keep the browser's behaviour. */
export function onLinkClick(event: MouseEvent): void {
  const anchor = (event.target as Element).closest("a");
  if (!anchor || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const url = new URL(anchor.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith(BASE) || anchor.target) return;
  event.preventDefault();
  navigate(url.pathname + url.search);
}
