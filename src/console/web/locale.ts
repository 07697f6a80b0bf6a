/**
 * The one locale every formatter of the console (and of its chart library) uses.
 *
 * Browsers report what the system says, and not always a tag Intl accepts: headless Chromium
 * on Linux with `LANG=C.UTF-8`, as CI runs it, says `en-US@posix`, and
 * `new Intl.NumberFormat("en-US@posix")` throws a RangeError. Any formatter handed
 * `navigator.language` directly would then take the page down with it.
 */

function accepted(tag: string): boolean {
  try {
    return Intl.getCanonicalLocales(tag).length === 1;
  } catch {
    return false;
  }
}

/** The tag `raw` names, canonical, or undefined when Intl refuses it even without its POSIX suffixes. */
function validTag(raw: string): string | undefined {
  // `en_US.UTF-8@euro` → `en-US`: the codeset and the modifier are POSIX, not BCP 47.
  const candidates = [raw, raw.replace(/[.@].*$/, "").replace(/_/g, "-")];
  for (const tag of candidates) {
    if (tag && !/^(c|posix)$/i.test(tag) && accepted(tag)) return Intl.getCanonicalLocales(tag)[0];
  }
  return undefined;
}

/** The first of `preferred` that Intl accepts (repaired where it can be), else `en-US`. */
export function pickLocale(preferred: readonly (string | undefined)[]): string {
  for (const raw of preferred) {
    const tag = raw ? validTag(raw) : undefined;
    if (tag) return tag;
  }
  return "en-US";
}

const browserLanguages = (): string[] =>
  typeof navigator === "undefined" ? [] : [...(navigator.languages ?? []), navigator.language];

/** The console's locale: the browser's first language that Intl accepts. */
export const LOCALE = pickLocale(browserLanguages());

const numbers = new Intl.NumberFormat(LOCALE);
export const formatNumber = (n: number) => numbers.format(n);

/**
 * uPlot builds a number formatter from `navigator.language` while its module loads, before any
 * option could be given, and throws with a tag Intl refuses. Called before uPlot is loaded, this
 * makes the page's `navigator.language` the console's locale when the browser's own is refused;
 * a valid one is left as it is.
 */
export function steadyNavigatorLanguage() {
  if (typeof navigator === "undefined" || accepted(navigator.language)) return;
  Object.defineProperty(navigator, "language", { configurable: true, get: () => LOCALE });
}

/** Month and weekday names in the console's locale, for the chart's time axis. */
export function dateNames() {
  const names = (options: Intl.DateTimeFormatOptions, dates: Date[]) => {
    const format = new Intl.DateTimeFormat(LOCALE, { ...options, timeZone: "UTC" });
    return dates.map((d) => format.format(d));
  };
  const months = Array.from({ length: 12 }, (_, m) => new Date(Date.UTC(2024, m, 1)));
  // 2024-01-07 was a Sunday; uPlot counts weekdays from Sunday.
  const days = Array.from({ length: 7 }, (_, d) => new Date(Date.UTC(2024, 0, 7 + d)));
  return {
    MMMM: names({ month: "long" }, months),
    MMM: names({ month: "short" }, months),
    WWWW: names({ weekday: "long" }, days),
    WWW: names({ weekday: "short" }, days),
  };
}
