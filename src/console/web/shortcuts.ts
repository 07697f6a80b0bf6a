import { useEffect } from "preact/hooks";
import { isLive, refreshAll, setLive } from "./live.ts";
import { PAGES } from "./pages.tsx";
import { href, navigate } from "./router.ts";

const typing = (el: EventTarget | null) =>
  el instanceof HTMLElement && (el.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName));

/** Moves focus to the next or previous list row (`[data-row]`) of the page. */
function moveRow(step: 1 | -1): void {
  const rows = Array.from(document.querySelectorAll<HTMLElement>("main [data-row]"));
  if (rows.length === 0) return;
  const at = rows.indexOf(document.activeElement as HTMLElement);
  const next = rows[at < 0 ? (step > 0 ? 0 : rows.length - 1) : Math.min(rows.length - 1, Math.max(0, at + step))];
  next?.focus();
  next?.scrollIntoView({ block: "nearest" });
}

/** `g` + a page's letter, `/`, `j`/`k`, `r`, `l` and `?` (see the help dialog). */
export function useShortcuts({ toggleHelp }: { toggleHelp: () => void }): void {
  useEffect(() => {
    let pendingG = 0;
    const onKey = (e: KeyboardEvent) => {
      if (e.metaKey || e.ctrlKey || e.altKey || typing(e.target)) return;
      if (pendingG && Date.now() - pendingG < 1500) {
        pendingG = 0;
        const page = PAGES.find((p) => p.nav && p.key === e.key);
        if (page) {
          e.preventDefault();
          navigate(href(page.path));
          document.getElementById("main")?.focus();
        }
        return;
      }
      switch (e.key) {
        case "g":
          pendingG = Date.now();
          return;
        case "/": {
          const field = document.querySelector<HTMLElement>("main input:not([type=checkbox]), main select, main textarea");
          if (field) {
            e.preventDefault();
            field.focus();
          }
          return;
        }
        case "j":
          return moveRow(1);
        case "k":
          return moveRow(-1);
        case "r":
          return refreshAll();
        case "l":
          return setLive(!isLive());
        case "?":
          return toggleHelp();
        case "Escape":
          if (document.querySelector(".overlay")) toggleHelp();
          return;
      }
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, [toggleHelp]);
}
