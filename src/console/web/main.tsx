import { render } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import { api, onUnauthorized } from "./api.ts";
import { formatTime } from "./format.ts";
import { setLive, useLive, useLiveStream, usePoll } from "./live.ts";
import { PAGES, findPage } from "./pages.tsx";
import { href, navigate, onLinkClick, useRoute } from "./router.ts";
import { readStatus, StatusContext } from "./status.ts";
import { adoptTokenFromLocation, saveToken, storedToken } from "./token.ts";
import { Boundary } from "./ui/boundary.tsx";
import { Toasts } from "./ui/toast.tsx";
import { useShortcuts } from "./shortcuts.ts";

function TokenPrompt({ onToken, failed }: { onToken: (token: string) => void; failed: boolean }) {
  const [value, setValue] = useState("");
  return (
    <main class="login">
      <form
        class="card"
        onSubmit={(e) => {
          e.preventDefault();
          if (value.trim()) onToken(value.trim());
        }}
      >
        <h1>
          <span class="logo" aria-hidden="true" /> svcd console
        </h1>
        <p>
          Open the <code>console:</code> link svcd printed at start, or paste the account's messaging token
          (<code>SVC_TOKEN</code>).
        </p>
        {failed && (
          <p class="error-box" role="alert">
            That token was refused.
          </p>
        )}
        <label class="field">
          <span>Token</span>
          <input type="password" autoFocus value={value} onInput={(e) => setValue(e.currentTarget.value)} autocomplete="off" />
        </label>
        <button class="primary" type="submit">
          Open
        </button>
      </form>
    </main>
  );
}

function Shell() {
  const route = useRoute();
  // The top bar's clock and counts keep their pace while events stream.
  const status = usePoll(readStatus, "status", 2000, 2000);
  const { live, stream } = useLive();
  useLiveStream();
  const [help, setHelp] = useState(false);
  const [menu, setMenu] = useState(false);
  const toggleHelp = useCallback(() => setHelp((h) => !h), []);
  useShortcuts({ toggleHelp });
  const page = findPage(route.path);
  useEffect(() => {
    document.title = `${page.title} · svcd console`;
    setMenu(false);
  }, [page]);
  const s = status.data;

  return (
    <StatusContext.Provider value={status}>
      <div class={`shell ${s?.readOnly ? "read-only" : ""}`} onClick={(event) => onLinkClick(event)}>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <nav class={`sidebar ${menu ? "open" : ""}`} aria-label="Console pages">
          <div class="brand">
            <a href={href("/")}>
              <span class="logo" aria-hidden="true" />
              svcd
            </a>
            <button type="button" class="menu-button" aria-expanded={menu} aria-label="Menu" onClick={() => setMenu(!menu)}>
              ☰
            </button>
          </div>
          <ul>
            {PAGES.filter((p) => p.nav && !(s?.readOnly && p.writes)).map((p) => (
              <li key={p.path}>
                <a href={href(p.path)} aria-current={p === page ? "page" : undefined}>
                  <span>{p.title}</span>
                  <kbd aria-hidden="true">g {p.key}</kbd>
                </a>
              </li>
            ))}
          </ul>
          <div class="nav-foot">
            <a href="/docs" target="_blank" rel="noopener">
              API docs
            </a>
            <button type="button" class="link" onClick={() => setHelp(true)}>
              Shortcuts <kbd>?</kbd>
            </button>
          </div>
        </nav>
        <div class="main-col">
          <div class="topbar">
            <div class="who">
              {s ? (
                <>
                  <span title="messaging user id">{s.userId}</span>
                  <span class="badge muted">{s.plan}</span>
                  <span class="badge muted" title="wire dialect">{s.dialect}</span>
                  {s.readOnly && (
                    <span class="badge warn" title="this token may read, not publish, change or delete">
                      read-only
                    </span>
                  )}
                </>
              ) : (
                <span class="muted">connecting…</span>
              )}
            </div>
            <div class="clock" title="the server's clock">
              {s && (
                <>
                  <span class={`badge ${s.clock.mode === "manual" ? "warn" : "muted"}`}>{s.clock.mode} clock</span>
                  <time data-testid="server-now">{formatTime(s.clock.now)}</time>
                </>
              )}
            </div>
            <label
              class="live-toggle"
              data-live={live ? (stream === "open" ? "stream" : "poll") : "off"}
              title={!live ? "Live updates are off" : stream === "open" ? "Live: views follow the server's event stream" : "Live: views re-read every few seconds (the event stream is not connected)"}
            >
              <input type="checkbox" checked={live} onChange={(e) => setLive(e.currentTarget.checked)} />
              <span class={`dot ${live ? "on" : ""} ${live && stream !== "open" ? "polling" : ""}`} aria-hidden="true" />
              Live
            </label>
          </div>
          <main id="main" tabIndex={-1}>
            <Boundary key={page.path} what={`${page.title} page`}>
              {s?.readOnly && page.writes ? (
                <p class="error-box" role="alert">
                  This token is read-only: it may read, not publish, change or delete. Open the console with the account's token to use this page.
                </p>
              ) : (
                <page.component route={route} />
              )}
            </Boundary>
          </main>
        </div>
        {help && <ShortcutHelp close={() => setHelp(false)} />}
        <Toasts />
      </div>
    </StatusContext.Provider>
  );
}

function ShortcutHelp({ close }: { close: () => void }) {
  return (
    <div class="overlay" onClick={close}>
      <div class="card dialog" role="dialog" aria-modal="true" aria-label="Keyboard shortcuts" onClick={(e) => e.stopPropagation()}>
        <h2>Keyboard shortcuts</h2>
        <table class="table compact">
          <tbody>
            {PAGES.filter((p) => p.nav).map((p) => (
              <tr key={p.path}>
                <td>
                  <kbd>g</kbd> <kbd>{p.key}</kbd>
                </td>
                <td>{p.title}</td>
              </tr>
            ))}
            <tr>
              <td>
                <kbd>/</kbd>
              </td>
              <td>Focus the first filter or field</td>
            </tr>
            <tr>
              <td>
                <kbd>j</kbd> <kbd>k</kbd>
              </td>
              <td>Next / previous row; Enter opens it</td>
            </tr>
            <tr>
              <td>
                <kbd>r</kbd>
              </td>
              <td>Refresh now</td>
            </tr>
            <tr>
              <td>
                <kbd>l</kbd>
              </td>
              <td>Live updates on / off</td>
            </tr>
            <tr>
              <td>
                <kbd>?</kbd>
              </td>
              <td>This help; Esc closes it</td>
            </tr>
          </tbody>
        </table>
        <button type="button" class="primary" autoFocus onClick={close}>
          Close
        </button>
      </div>
    </div>
  );
}

function App() {
  const [token, setToken] = useState(storedToken());
  const [refused, setRefused] = useState(false);
  useEffect(
    () =>
      onUnauthorized(() => {
        setRefused(true);
        setToken(null);
      }),
    [],
  );
  if (!token)
    return (
      <TokenPrompt
        failed={refused}
        onToken={async (value) => {
          saveToken(value);
          try {
            await api("/__svc/status");
            setRefused(false);
            setToken(value);
          } catch {
            /* onUnauthorized already asked again */
          }
        }}
      />
    );
  return <Shell />;
}

adoptTokenFromLocation();
if (location.pathname === "/") navigate("/console", { replace: true });
render(<App />, document.getElementById("app")!);
