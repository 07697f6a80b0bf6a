import { useState } from "preact/hooks";
import { api } from "../api.ts";
import { formatDuration, formatTime, fromLocalInput, parseDuration, toLocalInput } from "../format.ts";
import { useStatus } from "../status.ts";
import { Card, Fields, PageHead } from "../ui/bits.tsx";
import { Field } from "../ui/options.tsx";
import { act } from "../ui/toast.tsx";
import { McpCard } from "./mcp-card.tsx";
import { FaultRulesCard } from "./fault-rules.tsx";

const STEPS: Array<[string, number]> = [
  ["+1s", 1000],
  ["+10s", 10_000],
  ["+1m", 60_000],
  ["+10m", 600_000],
  ["+1h", 3_600_000],
  ["+1d", 86_400_000],
];

interface Advanced {
  now: number;
  timersFired: number;
}

/** Steering the test double: reset the account, flush deliveries, move a manual clock. */
export function TestDoublePage() {
  const { data: s } = useStatus();
  const [flush, setFlush] = useState(true);
  const [custom, setCustom] = useState("");
  const [to, setTo] = useState("");
  const manual = s?.clock.mode === "manual";

  const advance = (body: { ms: number } | { to: number }, label: string) =>
    act(`Advance ${label}`, () => api<Advanced>("/__svc/clock/advance", { method: "POST", query: { flush }, body }), (a) => `Clock at ${formatTime(a.now)}; ${a.timersFired} timer${a.timersFired === 1 ? "" : "s"} fired`);
  const customMs = parseDuration(custom);

  return (
    <>
      <PageHead title="Test double" sub="Control what a test suite controls: the account's data, pending deliveries, the server's clock and injected faults." />
      <div class="grid-2">
        <Card title="Clock">
          <Fields
            rows={[
              ["Mode", s ? <span class={`badge ${manual ? "warn" : "muted"}`}>{s.clock.mode}</span> : "…"],
              ["Server time", s ? <time data-testid="clock-now">{formatTime(s.clock.now, { millis: true })}</time> : "…"],
              ["Local time", formatTime(Date.now())],
            ]}
          />
          {manual ? (
            <>
              <div class="button-row" role="group" aria-label="Advance the clock">
                {STEPS.map(([label, ms]) => (
                  <button key={label} type="button" onClick={() => advance({ ms }, label)}>
                    {label}
                  </button>
                ))}
              </div>
              <form
                class="inline-form"
                onSubmit={(e) => {
                  e.preventDefault();
                  if (customMs !== undefined) advance({ ms: customMs }, formatDuration(customMs));
                }}
              >
                <Field label="Advance by" hint="90s, 1h30m, 2d, or milliseconds">
                  <input name="advance-by" value={custom} onInput={(e) => setCustom(e.currentTarget.value)} spellcheck={false} />
                </Field>
                <button type="submit" disabled={customMs === undefined}>
                  Advance
                </button>
              </form>
              <form
                class="inline-form"
                onSubmit={(e) => {
                  e.preventDefault();
                  const ms = fromLocalInput(to);
                  if (ms !== undefined) advance({ to: ms }, `to ${formatTime(ms)}`);
                }}
              >
                <Field label="Move to">
                  <input type="datetime-local" value={to || (s ? toLocalInput(s.clock.now) : "")} onInput={(e) => setTo(e.currentTarget.value)} />
                </Field>
                <button type="submit" disabled={!to}>
                  Move
                </button>
              </form>
              <label class="check-field">
                <input type="checkbox" checked={flush} onChange={(e) => setFlush(e.currentTarget.checked)} />
                <span>
                  Wait for the deliveries each step starts (<code>flush=true</code>)
                </span>
              </label>
            </>
          ) : (
            <p class="muted">
              The clock is real. Start svcd with <code>--clock manual</code> to stop time and move it from here.
            </p>
          )}
        </Card>
        <Card title="Deliveries and data">
          <p>
            <b>Flush</b> waits until nothing is due and nothing is in flight (callbacks included).
          </p>
          <button data-write type="button" onClick={() => act("Flush", () => api("/__svc/flush", { method: "POST" }), () => "Everything due was delivered")}>
            Flush
          </button>
          <hr />
          <p>
            <b>Reset</b> wipes this account's messages, DLQ, logs, URL Groups, schedules, queues, statistics and fault rules. Credentials and
            signing keys stay.
          </p>
          <button data-write
            type="button"
            class="danger"
            onClick={() => {
              if (confirm(`Reset account ${s?.userId ?? ""}? Everything it holds is deleted.`))
                act("Reset", () => api<{ parts: string[] }>("/__svc/reset", { method: "POST" }), (a) => `Reset: ${a.parts.join(", ")}`);
            }}
          >
            Reset account
          </button>
        </Card>
      </div>
      <McpCard />
      <FaultRulesCard />
    </>
  );
}
