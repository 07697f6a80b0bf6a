import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ConfigFile } from "../../src/config/config-file.ts";
import { ConfigError, defaultConfig } from "../../src/config/config.ts";
import { ManualClock } from "../../src/core/clock.ts";
import { silentLogger } from "../../src/core/log.ts";
import { createServer } from "../../src/server.ts";
import { account } from "../helpers/accounts.ts";
import { startReceiver } from "../helpers/receiver.ts";
import { startTestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

const T0 = Date.UTC(2031, 8, 1, 6, 0, 30);

function fixtures(receiverUrl: string): ConfigFile {
  return {
    accounts: [
      account("fixtures", {
        queues: [{ queueName: "emails", parallelism: 2 }, { queueName: "paused-one", paused: true }],
        urlGroups: [
          {
            name: "audit",
            endpoints: [{ url: `${receiverUrl}/audit/1`, name: "one" }, { url: `${receiverUrl}/audit/2` }],
            headers: { "Svc-Forward-X-Fixture": "yes" },
          },
        ],
        schedules: [
          {
            scheduleId: "audit-every-minute",
            destination: "audit",
            cron: "* * * * *",
            headers: { "Content-Type": "application/json", "Svc-Retries": "1" },
            body: '{"from":"fixture"}',
          },
          { scheduleId: "nightly", destination: `${receiverUrl}/nightly`, cron: "CRON_TZ=Europe/Berlin 0 3 * * *", paused: true },
        ],
      }),
    ],
  };
}

describe("config fixtures for URL Groups, queues and schedules", () => {
  test("are created at start, run, and survive a restart unchanged", async () => {
    const rx = await startReceiver();
    const configFile = fixtures(rx.url);
    const clock = new ManualClock(T0);
    const a = await startTestServer({ configFile, clock });
    const dirs = [a.dir];
    try {
      const group = (await (await a.api("/v2/topics/audit")).json()) as any;
      expect(group.endpoints).toEqual([{ name: "one", url: `${rx.url}/audit/1` }, { url: `${rx.url}/audit/2` }]);
      expect(group.headers).toEqual({ "Svc-Forward-X-Fixture": ["yes"] });
      const queues = (await (await a.api("/v2/queues")).json()) as any[];
      expect(queues.map((q) => [q.name, q.parallelism, q.paused])).toEqual([
        ["emails", 2, false],
        ["paused-one", 1, true],
      ]);
      const nightly = (await (await a.api("/v2/schedules/nightly")).json()) as any;
      expect(nightly).toMatchObject({ isPaused: true, destination: `${rx.url}/nightly`, cron: "CRON_TZ=Europe/Berlin 0 3 * * *" });
      expect(nightly.nextScheduleTime).toBe(Date.UTC(2031, 8, 2, 1, 0)); // 03:00 in Berlin (summer time)

      clock.advanceTo(T0 + 30_000);
      const got = await rx.waitFor(2, { match: (r) => r.path.startsWith("/audit/") });
      for (const r of got) {
        expect(r.text).toBe('{"from":"fixture"}');
        expect(r.headers.get("x-fixture")).toBe("yes");
        expect(r.headers.get("svc-schedule-id")).toBe("audit-every-minute");
      }
      const before = (await (await a.api("/v2/schedules/audit-every-minute")).json()) as any;
      await waitUntil(async () => ((await (await a.api("/v2/schedules/audit-every-minute")).json()) as any).lastScheduleTime === T0 + 30_000);
      await a.server.stop({ deadlineMs: 500 });

      // Same config, same database: nothing is recreated (last trigger and creation time are kept).
      const b = await startTestServer({ configFile, clock: new ManualClock(T0 + 40_000), config: { dbPath: a.config.dbPath } });
      dirs.push(b.dir);
      const after = (await (await b.api("/v2/schedules/audit-every-minute")).json()) as any;
      expect(after.createdAt).toBe(before.createdAt);
      expect(after.lastScheduleTime).toBe(T0 + 30_000);
      expect(((await (await b.api("/v2/topics")).json()) as any[]).map((g) => g.name)).toEqual(["audit"]);
      await b.server.stop({ deadlineMs: 500 });
    } finally {
      rx.stop();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a bad fixture is a ConfigError naming it", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ schedules: [{ scheduleId: "a", destination: "http://x.test/", cron: "* * * * *" }, { scheduleId: "b", destination: "http://x.test/", cron: "99 * * * *" }] }, "accounts[0].schedules[1].cron"],
      [{ schedules: [{ scheduleId: "a", destination: "no-such-group", cron: "* * * * *" }] }, "accounts[0].schedules[0].destination"],
      [{ schedules: [{ scheduleId: "a", destination: "http://x.test/", cron: "* * * * *", headers: { "Svc-Retries": "x" } }] }, "accounts[0].schedules[0].headers"],
      [{ schedules: [{ destination: "http://x.test/", cron: "* * * * *" }] }, "accounts[0].schedules[0]"],
      [{ queues: [{ queueName: "q", parallelism: 0 }] }, "accounts[0].queues[0].parallelism"],
      [{ queues: [{ queueName: "q", parallelism: 50 }] }, "accounts[0].queues[0]"],
      [{ queues: [{ queueName: "bad name" }] }, "accounts[0].queues[0]"],
      [{ urlGroups: [{ name: "g", endpoints: [{ url: "ftp://x" }] }] }, "accounts[0].urlGroups[0]"],
      [{ urlGroups: [{ name: "g", endpoints: [] }] }, "accounts[0].urlGroups[0].endpoints"],
      [{ urlGroups: [{ name: "g", endpoints: [{ url: "http://x.test" }], extra: 1 }] }, "accounts[0].urlGroups[0]"],
    ];
    for (const [extra, mention] of cases) {
      const dir = mkdtempSync(join(tmpdir(), "svcd-fixture-"));
      try {
        const config = { ...defaultConfig(dir), port: 0, dbPath: null, workers: 1 };
        let error: unknown;
        try {
          await createServer(config, { configFile: { accounts: [account("bad", extra)] }, logger: silentLogger });
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(ConfigError);
        expect((error as Error).message).toContain(mention);
        expect((error as Error).message).toStartWith("--config: ");
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });
});
