/**
 * The messaging token. The banner's link carries it in the URL fragment, which browsers never
 * send to a server; it moves to sessionStorage (gone when the tab closes) and out of the
 * address bar, so it is not left in the history or in a shared screenshot.
 */
const KEY = "svcd.console.token";

export function adoptTokenFromLocation(): void {
  const match = /(?:^#|&)token=([^&]*)/.exec(location.hash);
  if (!match) return;
  const token = decodeURIComponent(match[1] ?? "");
  if (token) sessionStorage.setItem(KEY, token);
  history.replaceState(history.state, "", location.pathname + location.search);
}

export const storedToken = (): string | null => sessionStorage.getItem(KEY);
export const saveToken = (token: string) => sessionStorage.setItem(KEY, token);
export const forgetToken = () => sessionStorage.removeItem(KEY);
