import chromium from "@sparticuz/chromium";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";

/**
 * A real headless Chromium, the binary `@sparticuz/chromium` ships inside its npm package (it is
 * unpacked to the temp folder on first use; nothing is downloaded). The flags keep it from
 * calling home: this machine's network is closed and a test must never leave the loopback.
 */
export async function launchBrowser(): Promise<{ browser: Browser; close: () => Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), "svcd-chromium-"));
  // navigator.language comes from LANG: "C.UTF-8" makes it "en-US@posix", which Intl refuses.
  const env: Record<string, string | undefined> = { ...process.env, LANG: "en_US.UTF-8" };
  delete env.LC_ALL;
  delete env.LC_MESSAGES;
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
      "--lang=en-US",
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
