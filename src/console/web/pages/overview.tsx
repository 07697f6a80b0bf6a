import { useState } from "preact/hooks";
import { formatBytes, formatCount, formatTime, relative } from "../format.ts";
import { readLogs } from "../logs.ts";
import { usePoll } from "../live.ts";
import { href } from "../router.ts";
import { deliveryRatePerMinute, PERIODS, pointTime, readStats, seriesOf, total, type Period } from "../stats.ts";
import { useStatus } from "../status.ts";
import { Card, Empty, ErrorBox, Loading, PageHead, StateBadge } from "../ui/bits.tsx";
import { Chart, type ChartSeries } from "../ui/chart.tsx";

const MESSAGE_SERIES: Array<{ id: string; label: string; colorVar: string }> = [
  { id: "created", label: "Published", colorVar: "--c-created" },
  { id: "delivered", label: "Delivered", colorVar: "--c-delivered" },
  { id: "retry", label: "Retried", colorVar: "--c-retry" },
  { id: "failed", label: "Failed (to DLQ)", colorVar: "--c-failed" },
  { id: "canceled", label: "Canceled", colorVar: "--c-canceled" },
];

function Tile({ label, value, hint, tone, link, testid }: { label: string; value: string; hint?: string; tone?: string; link?: string; testid?: string }) {
  const body = (
    <>
      <span class="tile-label">{label}</span>
      <span class="tile-value" data-testid={testid}>
        {value}
      </span>
      {hint && <span class="tile-hint">{hint}</span>}
    </>
  );
  return link ? (
    <a class={`tile ${tone ?? ""}`} href={link}>
      {body}
    </a>
  ) : (
    <div class={`tile ${tone ?? ""}`}>{body}</div>
  );
}

export function OverviewPage() {
  const [period, setPeriod] = useState<Period>("1h");
  const status = useStatus();
  const hour = usePoll(() => readStats("1h"), "stats-1h", 3000);
  const chosen = usePoll(() => readStats(period), `stats-${period}`, period === "1h" ? 3000 : 15000);
  const recent = usePoll(() => readLogs({ count: 8 }), "recent", 2000);
  const s = status.data;
  const stats = period === "1h" ? hour.data : chosen.data;
  const now = s?.clock.now ?? Date.now();
  const rate = hour.data ? deliveryRatePerMinute(hour.data, now) : undefined;

  const times = stats?.daily_qstash_messages[0]?.data_points.map((p) => pointTime(p.x)) ?? [];
  const series: ChartSeries[] = stats ? MESSAGE_SERIES.map((m) => ({ label: m.label, colorVar: m.colorVar, values: seriesOf(stats, m.id) })) : [];
  const bandwidth = stats?.daily_bandwidth_used.map((p) => p.y) ?? [];

  return (
    <>
      <PageHead title="Overview" sub="Everything this account's messages did, live.">
        <div class="seg" role="group" aria-label="Period">
          {PERIODS.map((p) => (
            <button key={p} type="button" aria-pressed={p === period} onClick={() => setPeriod(p)}>
              {p}
            </button>
          ))}
        </div>
      </PageHead>

      <div class="tiles">
        <Tile label="Delivery rate" value={rate === undefined ? "—" : `${rate < 10 ? rate.toFixed(1) : Math.round(rate)}/min`} hint="last minute" testid="rate" />
        <Tile label="In flight" value={formatCount(s?.messages.inFlight)} hint="attempt running" testid="in-flight" />
        <Tile label="Due now" value={formatCount(s?.messages.due)} hint="waiting for a worker" testid="due" />
        <Tile label="Delayed" value={formatCount(s?.messages.delayed)} hint="delay, not-before, retry" testid="delayed" />
        <Tile label="Held" value={formatCount(s?.messages.waiting)} hint="queue or flow control" link={href("/flow-control")} />
        <Tile label="DLQ" value={formatCount(s?.dlq)} hint="failed for good" tone={s && s.dlq > 0 ? "bad" : ""} link={href("/dlq")} testid="dlq" />
      </div>

      <Card
        title={`Messages, last ${period}`}
        actions={
          stats && (
            <span class="legend-totals">
              {MESSAGE_SERIES.map((m) => (
                <span key={m.id} class="legend-total">
                  <i style={`background: var(${m.colorVar})`} />
                  {m.label} <b>{formatCount(total(stats, m.id))}</b>
                </span>
              ))}
            </span>
          )
        }
      >
        {chosen.error && period !== "1h" ? <ErrorBox error={chosen.error} /> : hour.error && period === "1h" ? <ErrorBox error={hour.error} /> : null}
        {stats ? <Chart times={times} series={series} label={`Messages per interval over the last ${period}`} /> : <Loading />}
      </Card>

      <div class="grid-2">
        <Card title={`Bandwidth, last ${period}`} actions={stats && <span class="muted">{formatBytes(bandwidth.reduce((a, b) => a + b, 0))}</span>}>
          {stats ? (
            <Chart times={times} series={[{ label: "Bytes", colorVar: "--c-bytes", values: bandwidth }]} height={160} label={`Bytes in and out over the last ${period}`} />
          ) : (
            <Loading />
          )}
        </Card>
        <Card title="Recent activity" actions={<a href={href("/messages")}>All messages →</a>}>
          {recent.error && <ErrorBox error={recent.error} />}
          {recent.data && recent.data.logs.length === 0 && <Empty>Nothing yet. Publish a message from the Publish page or with the API.</Empty>}
          {recent.data && recent.data.logs.length > 0 && (
            <ul class="activity">
              {recent.data.logs.map((e) => (
                <li key={`${e.messageId}-${e.time}-${e.state}`}>
                  <StateBadge state={e.state} />
                  <a class="mono ellipsis" href={href(`/messages/${e.messageId}`)} title={e.url}>
                    {e.url ?? e.messageId}
                  </a>
                  <time class="muted small" title={formatTime(e.time, { millis: true })}>
                    {relative(e.time, now)}
                  </time>
                </li>
              ))}
            </ul>
          )}
        </Card>
      </div>
    </>
  );
}
