import { useState } from "preact/hooks";
import { api, ApiError } from "../api.ts";
import { formatCount, formatDuration, formatTime } from "../format.ts";
import { usePoll } from "../live.ts";
import { href } from "../router.ts";
import { Badge, Card, Empty, ErrorBox, Loading, PageHead } from "../ui/bits.tsx";
import { Field } from "../ui/options.tsx";
import { act } from "../ui/toast.tsx";

interface FlowKey {
  flowControlKey: string;
  waitListSize: number;
  parallelismMax: number;
  parallelismCount: number;
  rateMax: number;
  rateCount: number;
  ratePeriod: number;
  ratePeriodStart: number;
  isPaused: boolean;
  isPinnedParallelism?: boolean;
  isPinnedRate?: boolean;
}

const enc = encodeURIComponent;
const keyAction = (key: string, action: string, query?: Record<string, string>) => api(`/v2/flowControl/${enc(key)}/${action}`, { method: "POST", query });

/** `ratePeriodStart` is Unix seconds in the current API (ms in older answers). */
const periodStart = (v: number) => (v < 1e12 ? v * 1000 : v);

async function readGlobal() {
  try {
    return await api<{ parallelismMax: number; parallelismCount: number }>("/v2/globalParallelism");
  } catch (e) {
    if (e instanceof ApiError && (e.status === 404 || e.status === 405)) return null;
    throw e;
  }
}

function PinForm({ k, close }: { k: FlowKey; close: () => void }) {
  const [parallelism, setParallelism] = useState("");
  const [rate, setRate] = useState("");
  const [period, setPeriod] = useState("");
  return (
    <form data-write
      class="inline-form"
      onSubmit={async (e) => {
        e.preventDefault();
        const query: Record<string, string> = {};
        if (parallelism) query.parallelism = parallelism;
        if (rate) query.rate = rate;
        if (period) query.period = period;
        if (await act("Pin", () => keyAction(k.flowControlKey, "pin", query), () => `Pinned ${k.flowControlKey}`)) close();
      }}
    >
      <Field label="Parallelism">
        <input type="number" min={1} value={parallelism} onInput={(e) => setParallelism(e.currentTarget.value)} />
      </Field>
      <Field label="Rate">
        <input type="number" min={1} value={rate} onInput={(e) => setRate(e.currentTarget.value)} />
      </Field>
      <Field label="Period (s)">
        <input type="number" min={1} value={period} onInput={(e) => setPeriod(e.currentTarget.value)} />
      </Field>
      <button type="submit" class="primary" disabled={!parallelism && !rate && !period}>
        Pin
      </button>
      <button type="button" onClick={close}>
        Cancel
      </button>
    </form>
  );
}

function KeyCard({ k }: { k: FlowKey }) {
  const [pinning, setPinning] = useState(false);
  const pinned = k.isPinnedParallelism || k.isPinnedRate;
  return (
    <Card
      title={
        <>
          <a href={href("/messages", { flowControlKey: k.flowControlKey })}>{k.flowControlKey}</a> {k.isPaused && <Badge tone="warn">paused</Badge>}{" "}
          {k.isPinnedParallelism && <Badge tone="info">parallelism pinned</Badge>} {k.isPinnedRate && <Badge tone="info">rate pinned</Badge>}
        </>
      }
      actions={
        <>
          <button data-write type="button" class="small" onClick={() => act(k.isPaused ? "Resume" : "Pause", () => keyAction(k.flowControlKey, k.isPaused ? "resume" : "pause"), () => `${k.isPaused ? "Resumed" : "Paused"} ${k.flowControlKey}`)}>
            {k.isPaused ? "Resume" : "Pause"}
          </button>
          <button data-write type="button" class="small" aria-expanded={pinning} onClick={() => setPinning(!pinning)}>
            Pin…
          </button>
          {pinned && (
            <button data-write type="button" class="small" onClick={() => act("Unpin", () => keyAction(k.flowControlKey, "unpin", { parallelism: "true", rate: "true" }), () => `Unpinned ${k.flowControlKey}`)}>
              Unpin
            </button>
          )}
          <button data-write type="button" class="small" onClick={() => act("Reset rate", () => keyAction(k.flowControlKey, "resetRate"), () => `Rate of ${k.flowControlKey} reset`)}>
            Reset rate
          </button>
        </>
      }
    >
      <div class="meters">
        <Meter name="waiting" label="Waiting" value={formatCount(k.waitListSize)} />
        <Meter name="parallelism" label="Parallelism" value={`${k.parallelismCount} / ${k.parallelismMax || "∞"}`} ratio={k.parallelismMax ? k.parallelismCount / k.parallelismMax : undefined} />
        <Meter name="rate" label={`Rate per ${formatDuration((k.ratePeriod || 1) * 1000)}`} value={`${k.rateCount} / ${k.rateMax || "∞"}`} ratio={k.rateMax ? k.rateCount / k.rateMax : undefined} />
        <Meter name="period" label="Period started" value={k.ratePeriodStart ? formatTime(periodStart(k.ratePeriodStart)) : "—"} />
      </div>
      {pinning && <PinForm k={k} close={() => setPinning(false)} />}
    </Card>
  );
}

function Meter({ name, label, value, ratio }: { name: string; label: string; value: string; ratio?: number }) {
  return (
    <div class="meter" data-meter={name}>
      <span class="tile-label">{label}</span>
      <span class="meter-value">{value}</span>
      {ratio !== undefined && (
        <span class="bar" aria-hidden="true">
          <i style={`width: ${Math.min(100, Math.round(ratio * 100))}%`} />
        </span>
      )}
    </div>
  );
}

export function FlowControlPage() {
  const list = usePoll(() => api<FlowKey[]>("/v2/flowControl"), "flow");
  const global = usePoll(readGlobal, "global-parallelism", 3000);
  const [key, setKey] = useState("");
  const keys = [...(list.data ?? [])].sort((a, b) => a.flowControlKey.localeCompare(b.flowControlKey));
  return (
    <>
      <PageHead title="Flow control" sub="Per-key limits: how many deliveries run at once and how many start per period." />
      {global.data && (
        <div class="tiles few">
          <div class="tile">
            <span class="tile-label">Global parallelism</span>
            <span class="tile-value">
              {global.data.parallelismCount} / {global.data.parallelismMax}
            </span>
            <span class="tile-hint">flow-controlled deliveries running, account-wide</span>
          </div>
        </div>
      )}
      {list.error && <ErrorBox error={list.error} />}
      {list.loading && !list.data && <Loading />}
      {list.data && keys.length === 0 && <Empty>No active keys. A key shows while it has waiting messages or recent deliveries.</Empty>}
      {keys.map((k) => (
        <div key={k.flowControlKey} data-flow-key={k.flowControlKey}>
          <KeyCard k={k} />
        </div>
      ))}
      <Card title="Steer a key before its first message">
        <form data-write
          class="inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            act("Pause", () => keyAction(key.trim(), "pause"), () => `Paused ${key.trim()}`);
          }}
        >
          <Field label="Key">
            <input required value={key} spellcheck={false} onInput={(e) => setKey(e.currentTarget.value)} />
          </Field>
          <button type="submit">Pause key</button>
        </form>
      </Card>
    </>
  );
}
