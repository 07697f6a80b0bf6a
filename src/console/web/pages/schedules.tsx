import { useState } from "preact/hooks";
import { api } from "../api.ts";
import { formatTime, relative } from "../format.ts";
import { usePoll } from "../live.ts";
import { href } from "../router.ts";
import { useStatus } from "../status.ts";
import { Badge, Card, Empty, ErrorBox, Loading, Mono, PageHead } from "../ui/bits.tsx";
import { emptyOptions, Field, OptionFields, optionHeaders } from "../ui/options.tsx";
import { act } from "../ui/toast.tsx";

interface Schedule {
  scheduleId: string;
  cron: string;
  destination: string;
  createdAt: number;
  method: string;
  isPaused: boolean;
  queueName?: string;
  label?: string;
  lastScheduleTime?: number;
  nextScheduleTime?: number;
  lastScheduleStates?: Record<string, string>;
}

const STATE_TONE: Record<string, string> = { SUCCESS: "good", FAIL: "bad", IN_PROGRESS: "info" };
const enc = encodeURIComponent;

export function SchedulesPage() {
  const list = usePoll(() => api<Schedule[]>("/v2/schedules"), "schedules");
  const now = useStatus().data?.clock.now ?? Date.now();
  const [creating, setCreating] = useState(false);
  const schedules = [...(list.data ?? [])].sort((a, b) => a.scheduleId.localeCompare(b.scheduleId));

  return (
    <>
      <PageHead title="Schedules" sub="Cron schedules and what their last trigger produced.">
        <button data-write type="button" class="primary" aria-expanded={creating} onClick={() => setCreating(!creating)}>
          {creating ? "Close" : "New schedule"}
        </button>
      </PageHead>
      {creating && <CreateSchedule done={() => setCreating(false)} />}
      {list.error && <ErrorBox error={list.error} />}
      {list.loading && !list.data && <Loading />}
      {list.data && schedules.length === 0 && <Empty>No schedules. Create one here or with POST /v2/schedules/&lt;destination&gt;.</Empty>}
      {schedules.length > 0 && (
        <div class="table-wrap">
          <table class="table" aria-label="Schedules">
            <thead>
              <tr>
                <th>Schedule</th>
                <th>Cron</th>
                <th>Destination</th>
                <th>Next run</th>
                <th class="hide-narrow">Last run</th>
                <th class="hide-narrow">Last states</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {schedules.map((s) => (
                <tr key={s.scheduleId} data-row tabIndex={0} data-schedule={s.scheduleId}>
                  <td>
                    <a class="mono" href={href("/messages", { scheduleId: s.scheduleId })} title="Messages of this schedule">
                      {s.scheduleId}
                    </a>{" "}
                    {s.isPaused && <Badge tone="warn">paused</Badge>}
                  </td>
                  <td>
                    <Mono>{s.cron}</Mono>
                  </td>
                  <td class="mono ellipsis" title={s.destination}>
                    {s.method !== "POST" ? `${s.method} ` : ""}
                    {s.destination}
                    {s.queueName && <span class="tag">≡ {s.queueName}</span>}
                  </td>
                  <td class="nowrap" data-label="next" title={formatTime(s.nextScheduleTime)}>
                    {s.isPaused ? <span class="muted">skipped while paused</span> : relative(s.nextScheduleTime, now)}
                  </td>
                  <td class="nowrap hide-narrow" data-label="last" title={formatTime(s.lastScheduleTime)}>
                    {s.lastScheduleTime ? relative(s.lastScheduleTime, now) : <span class="muted">never</span>}
                  </td>
                  <td class="hide-narrow">
                    {Object.entries(s.lastScheduleStates ?? {}).map(([id, state]) => (
                      <a key={id} href={href(`/messages/${id}`)} title={id}>
                        <Badge tone={STATE_TONE[state] ?? "muted"}>{state}</Badge>
                      </a>
                    ))}
                  </td>
                  <td class="row-actions">
                    {s.isPaused ? (
                      <button data-write type="button" class="small" onClick={() => act("Resume", () => api(`/v2/schedules/${enc(s.scheduleId)}/resume`, { method: "POST" }), () => `Resumed ${s.scheduleId}`)}>
                        Resume
                      </button>
                    ) : (
                      <button data-write type="button" class="small" onClick={() => act("Pause", () => api(`/v2/schedules/${enc(s.scheduleId)}/pause`, { method: "POST" }), () => `Paused ${s.scheduleId}`)}>
                        Pause
                      </button>
                    )}
                    <button data-write
                      type="button"
                      class="small danger"
                      onClick={() => confirm(`Delete schedule ${s.scheduleId}?`) && act("Delete", () => api(`/v2/schedules/${enc(s.scheduleId)}`, { method: "DELETE" }), () => `Deleted ${s.scheduleId}`)}
                    >
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

function CreateSchedule({ done }: { done: () => void }) {
  const prefix = useStatus().data?.headerPrefix ?? "Svc";
  const [destination, setDestination] = useState("");
  const [cron, setCron] = useState("*/5 * * * *");
  const [scheduleId, setScheduleId] = useState("");
  const [queue, setQueue] = useState("");
  const [o, setO] = useState(emptyOptions);

  return (
    <Card title="New schedule">
      <form data-write
        onSubmit={async (e) => {
          e.preventDefault();
          const headers = optionHeaders(o, prefix);
          headers[`${prefix}-Cron`] = cron.trim();
          if (scheduleId.trim()) headers[`${prefix}-Schedule-Id`] = scheduleId.trim();
          if (queue.trim()) headers[`${prefix}-Queue-Name`] = queue.trim();
          const answer = await act("Create schedule", () => api<{ scheduleId: string }>(`/v2/schedules/${destination.trim()}`, { method: "POST", headers, body: o.body }), (a) => `Created ${a.scheduleId}`);
          if (answer) done();
        }}
      >
        <div class="form-grid">
          <Field label="Destination" hint="a URL or a URL Group name" wide>
            <input required value={destination} placeholder="https://example.com/report" spellcheck={false} onInput={(e) => setDestination(e.currentTarget.value)} />
          </Field>
          <Field label="Cron" hint="5 fields, UTC; CRON_TZ=Europe/Berlin 0 9 * * 1-5">
            <input required value={cron} spellcheck={false} onInput={(e) => setCron(e.currentTarget.value)} />
          </Field>
          <Field label="Schedule id" hint="optional; an existing id is replaced">
            <input value={scheduleId} spellcheck={false} onInput={(e) => setScheduleId(e.currentTarget.value)} />
          </Field>
          <Field label="Queue" hint="optional">
            <input value={queue} spellcheck={false} onInput={(e) => setQueue(e.currentTarget.value)} />
          </Field>
        </div>
        <OptionFields o={o} set={setO} prefix={prefix} schedule />
        <div class="form-actions">
          <button type="submit" class="primary">
            Create schedule
          </button>
        </div>
      </form>
    </Card>
  );
}
