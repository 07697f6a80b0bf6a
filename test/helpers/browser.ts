import chromium from "@sparticuz/chromium";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { consoleLink } from "../../src/banner.ts";
import puppeteer, { type Browser, type ElementHandle, type Page } from "puppeteer-core";

/**
 * A real headless Chromium, the binary `@sparticuz/chromium` ships inside its npm package (it is
 * unpacked to the temp folder on first use; nothing is downloaded). The flags keep it from
 * calling home: this machine's network is closed and a test must never leave the loopback.
 * It runs in the test's own locale; `posixLocale` starts it as CI runners often do, with
 * `LANG=C.UTF-8`, where Chromium reports the language `en-US@posix` (a tag Intl refuses).
 */
export async function launchBrowser({ posixLocale = false } = {}): Promise<{ browser: Browser; close: () => Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), "svcd-chromium-"));
  const env: Record<string, string | undefined> = { ...process.env };
  if (posixLocale) {
    env.LANG = "C.UTF-8";
    env.LC_ALL = "C.UTF-8";
  }
  const browser = await puppeteer.launch({
    executablePath: await chromium.executablePath(),
    headless: true,
    pipe: true,
    dumpio: Boolean(process.env.SVCD_BROWSER_LOG),
    env: env as Record<string, string>,
    userDataDir: profile,
    args: [
      "--no-sandbox",
      "--headless",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
      "--disable-sync",
      "--disable-default-apps",
      "--disable-extensions",
    ],
  });
  return {
    browser,
    async close() {
      await browser.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** What a page did that a test must see: requests to other origins and JavaScript errors. */
export function watchPage(page: Page, allowedOrigin: string) {
  const foreignRequests: string[] = [];
  const errors: string[] = [];
  page.on("request", (request) => {
    const url = request.url();
    if (!url.startsWith(allowedOrigin + "/") && !url.startsWith("data:") && url !== "about:blank") foreignRequests.push(url);
  });
  page.on("pageerror", (error) => errors.push(`pageerror: ${(error as Error).message}`));
  page.on("console", (message) => {
    // Chromium also logs every non-2xx answer ("Failed to load resource"); those are HTTP, not script errors.
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) errors.push(`console.error: ${message.text()}`);
  });
  return { foreignRequests, errors };
}

/**
 * A console tab in `browser` at 1280×800, opened with the banner's link (the token in the URL
 * fragment), watched for foreign requests and script errors; confirmation dialogs are accepted.
 * `prepare` sees the tab before the console loads.
 */
export async function openConsole(browser: Browser, url: string, token: string, prepare?: (page: Page) => Promise<unknown>) {
  const page = await browser.newPage();
  await prepare?.(page);
  await page.setViewport({ width: 1280, height: 800 });
  const watched = watchPage(page, url);
  page.on("dialog", (dialog) => void dialog.accept());
  await page.goto(consoleLink(url, token));
  return { page, watched, ui: consoleDriver(page) };
}

/** How long a browser test waits for the console to show something. */
export const UI_WAIT = 10_000;

/**
 * Waits until the first chart's canvas shows more than 10 pixels in the colour of the theme's
 * `colorVar` (a series drawn), and answers how many it shows.
 */
export async function chartPixels(page: Page, colorVar: string): Promise<number> {
  const drawn = await page.waitForFunction(
    (variable) => {
      const page = globalThis as any;
      const canvas = page.document.querySelector(".chart canvas");
      const color = page.getComputedStyle(page.document.documentElement).getPropertyValue(variable).trim();
      if (!canvas || !/^#[0-9a-f]{6}$/i.test(color)) return 0;
      const [r, g, b] = [1, 3, 5].map((i) => parseInt(color.slice(i, i + 2), 16));
      const { data } = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height);
      let hits = 0;
      for (let i = 0; i < data.length; i += 4) if (Math.abs(data[i]! - r!) < 8 && Math.abs(data[i + 1]! - g!) < 8 && Math.abs(data[i + 2]! - b!) < 8 && data[i + 3]! > 200) hits++;
      return hits > 10 ? hits : 0;
    },
    { timeout: UI_WAIT, polling: 100 },
    colorVar,
  );
  return Number(await drawn.jsonValue());
}

// Callbacks given to page.evaluate/waitForFunction run inside the browser. The tests are typed for
// the server (no DOM library), so they reach the page's globals through `(globalThis as any)`.

/**
 * What a user does with the console, as browser tests say it: follow a link of the navigation,
 * wait for a text, press a button by its label, take a screenshot for the docs.
 * `screenshotDir` (from `SVCD_SCREENSHOTS`) is where pictures go; none are taken without it.
 */
export function consoleDriver(page: Page, screenshotDir = process.env.SVCD_SCREENSHOTS) {
  const waitForPath = (path: string) => page.waitForFunction((p) => (globalThis as any).location.pathname === p, { timeout: UI_WAIT }, path);
  return {
    waitForPath,
    /** Follows a link of the page's own navigation, as a user clicks it. */
    async go(path: string) {
      const target = path === "/" ? "/console" : `/console${path}`;
      await page.click(`nav a[href="${target}"]`);
      await waitForPath(target);
    },
    textOf: (selector: string): Promise<string> => page.$eval(selector, (el) => (el as any).innerText),
    /** Waits until an element matching `selector` shows `text`. */
    waitForText: (selector: string, text: string) =>
      page.waitForFunction(
        (sel, t) => Array.from((globalThis as any).document.querySelectorAll(sel)).some((el) => (el as any).innerText.includes(t)),
        { timeout: UI_WAIT },
        selector,
        text,
      ),
    /** Waits until there are elements matching `selector` and none of them shows `text`. */
    waitForNoText: (selector: string, text: string) =>
      page.waitForFunction(
        (sel, t) => {
          const found = Array.from((globalThis as any).document.querySelectorAll(sel));
          return found.length > 0 && !found.some((el) => (el as any).innerText.includes(t));
        },
        { timeout: UI_WAIT },
        selector,
        text,
      ),
    /** Clicks the enabled button labelled `label` inside `scope`, once there is one. */
    async clickButton(scope: string, label: string) {
      const button = await page.waitForFunction(
        (s, l) => Array.from((globalThis as any).document.querySelectorAll(`${s} button`)).find((b) => (b as any).innerText.trim() === l && !(b as any).disabled),
        { timeout: UI_WAIT },
        scope,
        label,
      );
      await button.evaluate((b) => (b as any).click());
    },
    /** Types into the field labelled `label` inside `scope` (its current value replaced), or picks `value` of a select. */
    async fill(scope: string, label: string, value: string) {
      const handle = await page.waitForFunction(
        (s, l) =>
          Array.from((globalThis as any).document.querySelectorAll(`${s} label`))
            .map((el) => el as any)
            .find((el) => el.querySelector(":scope > span")?.innerText.trim() === l)
            ?.querySelector("input, textarea, select"),
        { timeout: UI_WAIT },
        scope,
        label,
      );
      const field = handle.asElement() as ElementHandle;
      if (await field.evaluate((el) => (el as any).tagName === "SELECT")) {
        await field.select(value);
        return;
      }
      // As a user replaces a value: select it all, delete it, type. Every key is an input event,
      // so the page's state follows; a value set directly was undone when the page happened to
      // render before the typing (the old text came back and the new one was appended to it).
      await field.focus();
      await page.keyboard.down("Control");
      await page.keyboard.press("KeyA");
      await page.keyboard.up("Control");
      await page.keyboard.press("Backspace");
      await field.type(value);
      await page.waitForFunction((el, v) => (el as any).value === v, { timeout: UI_WAIT }, field, value);
    },
    async shoot(name: string) {
      if (!screenshotDir) return;
      mkdirSync(screenshotDir, { recursive: true });
      // Notices of earlier actions would cover the picture.
      await page.evaluate(() => (globalThis as any).document.querySelector(".toasts")?.replaceChildren());
      await page.screenshot({ path: join(screenshotDir, name) as `${string}.png` });
    },
  };
}

export type ConsoleDriver = ReturnType<typeof consoleDriver>;
