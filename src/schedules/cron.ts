import { Cron } from "croner";
import { badRequest } from "../core/errors.ts";

/**
 * A schedule's cron: five fields (minute resolution), in UTC unless prefixed with
 * `CRON_TZ=Area/City `. Parsed patterns are cached by their text, since every trigger asks for the
 * next run.
 */
const cache = new Map<string, Cron>();

function build(expression: string): Cron {
  let timezone = "UTC";
  let pattern = expression.trim();
  const tz = /^CRON_TZ=(\S+)\s+(.+)$/.exec(pattern);
  if (tz) {
    timezone = tz[1]!;
    pattern = tz[2]!.trim();
    try {
      new Intl.DateTimeFormat("en-US", { timeZone: timezone });
    } catch {
      throw new Error(`unknown time zone "${timezone}" in CRON_TZ`);
    }
  } else if (/^CRON_TZ=/.test(pattern)) {
    throw new Error("CRON_TZ=Area/City must be followed by a space and five cron fields");
  }
  // `paused` and no callback: croner only computes run times here, it never starts a timer.
  return new Cron(pattern, { mode: "5-part", timezone, paused: true });
}

/** Validates a cron expression; 400 naming `what` (the header) when it is not one. */
export function checkCron(expression: string, what: string): string {
  let cron: Cron;
  try {
    cron = cronOf(expression);
  } catch (error) {
    throw badRequest(`invalid ${what} "${expression.slice(0, 120)}": ${(error as Error).message.replace(/^CronPattern: /, "")}`);
  }
  // A valid pattern that matches no date (February 31st) would make a schedule that never fires.
  if (!cron.nextRun()) throw badRequest(`invalid ${what} "${expression.slice(0, 120)}": it never fires`);
  return expression;
}

function cronOf(expression: string): Cron {
  let cron = cache.get(expression);
  if (!cron) {
    cron = build(expression);
    if (cache.size > 10_000) cache.clear();
    cache.set(expression, cron);
  }
  return cron;
}

/** The first trigger strictly after `afterMs` (Unix ms), or null when the expression never fires again. */
export function nextRunAfter(expression: string, afterMs: number): number | null {
  const next = cronOf(expression).nextRun(new Date(afterMs));
  return next ? next.getTime() : null;
}
