import { expect, test } from "bun:test";
import { checkCron, nextRunAfter } from "../../src/schedules/cron.ts";
import { HttpError } from "../../src/core/errors.ts";

const at = (iso: string) => Date.parse(iso);

test("five fields at minute resolution, in UTC", () => {
  expect(nextRunAfter("*/15 * * * *", at("2025-03-01T10:07:30Z"))).toBe(at("2025-03-01T10:15:00Z"));
  expect(nextRunAfter("0 9 * * 1", at("2025-03-01T10:00:00Z"))).toBe(at("2025-03-03T09:00:00Z")); // Saturday -> Monday
});

test("the next run is strictly after the given instant", () => {
  expect(nextRunAfter("* * * * *", at("2025-03-01T10:00:00Z"))).toBe(at("2025-03-01T10:01:00Z"));
  expect(nextRunAfter("0 0 1 1 *", at("2025-01-01T00:00:00Z"))).toBe(at("2026-01-01T00:00:00Z"));
});

test("CRON_TZ= runs in that zone's local time, across a daylight-saving change", () => {
  // 09:00 in Berlin is 08:00 UTC in winter and 07:00 UTC in summer (clocks moved on 30 March 2025).
  expect(nextRunAfter("CRON_TZ=Europe/Berlin 0 9 * * *", at("2025-03-29T12:00:00Z"))).toBe(at("2025-03-30T07:00:00Z"));
  expect(nextRunAfter("CRON_TZ=Europe/Berlin 0 9 * * *", at("2025-03-28T12:00:00Z"))).toBe(at("2025-03-29T08:00:00Z"));
});

test("checkCron answers the expression, or 400 naming the header and what is wrong", () => {
  expect(checkCron("*/5 * * * *", "Svc-Cron")).toBe("*/5 * * * *");
  const refused = (expression: string) => {
    try {
      checkCron(expression, "Svc-Cron");
    } catch (error) {
      expect(error).toBeInstanceOf(HttpError);
      expect((error as HttpError).status).toBe(400);
      return (error as HttpError).message;
    }
    throw new Error(`"${expression}" was accepted`);
  };
  expect(refused("every minute")).toStartWith('invalid Svc-Cron "every minute"');
  expect(refused("* * * * * *")).toStartWith("invalid Svc-Cron");
  expect(refused("0 0 31 2 *")).toBe('invalid Svc-Cron "0 0 31 2 *": it never fires');
  expect(refused("CRON_TZ=Mars/Olympus 0 9 * * *")).toContain('unknown time zone "Mars/Olympus"');
  expect(refused("CRON_TZ=Europe/Berlin")).toContain("must be followed by a space and five cron fields");
});

test("a long expression is cut in the message", () => {
  const long = "9".repeat(400) + " * * * *";
  expect(() => checkCron(long, "Svc-Cron")).toThrow(/^invalid Svc-Cron "9{120}":/);
});
