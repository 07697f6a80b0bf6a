import { useState } from "preact/hooks";
import { api } from "../api.ts";
import { formatCount, formatTime } from "../format.ts";
import { usePoll } from "../live.ts";
import { href } from "../router.ts";
import { Badge, Card, Empty, ErrorBox, Loading, PageHead } from "../ui/bits.tsx";
import { Field } from "../ui/options.tsx";
import { act } from "../ui/toast.tsx";

interface Queue {
  name: string;
  createdAt: number;
  updatedAt: number;
  parallelism: number;
  paused: boolean;
  lag: number;
}

const enc = encodeURIComponent;
const upsert = (queueName: string, fields: { parallelism?: number; paused?: boolean }) => api("/v2/queues", { method: "POST", body: { queueName, ...fields } });

function Parallelism({ q }: { q: Queue }) {
  const [value, setValue] = useState(String(q.parallelism));
  const changed = value !== String(q.parallelism);
  return (
    <form data-write
      class="inline-edit"
      onSubmit={(e) => {
        e.preventDefault();
        act("Parallelism", () => upsert(q.name, { parallelism: Number(value) }), () => `${q.name}: parallelism ${value}`);
      }}
    >
      <input type="number" min={1} value={value} aria-label={`Parallelism of ${q.name}`} onInput={(e) => setValue(e.currentTarget.value)} />
      {changed && (
        <button type="submit" class="small">
          Save
        </button>
      )}
    </form>
  );
}

export function QueuesPage() {
  const list = usePoll(() => api<Queue[]>("/v2/queues"), "queues");
  const [name, setName] = useState("");
  const [parallelism, setParallelism] = useState("1");
  const queues = [...(list.data ?? [])].sort((a, b) => a.name.localeCompare(b.name));

  return (
    <>
      <PageHead title="Queues" sub="FIFO queues: lag is what waits or runs; parallelism how many run at once." />
      {list.error && <ErrorBox error={list.error} />}
      {list.loading && !list.data && <Loading />}
      {list.data && queues.length === 0 && <Empty>No queues. Publishing with a queue, or the form below, creates one.</Empty>}
      {queues.length > 0 && (
        <div class="table-wrap">
          <table class="table" aria-label="Queues">
            <thead>
              <tr>
                <th>Queue</th>
                <th class="num">Lag</th>
                <th>Parallelism</th>
                <th class="hide-narrow">Updated</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {queues.map((q) => (
                <tr key={q.name} data-row data-queue={q.name} tabIndex={0}>
                  <td>
                    <a href={href("/messages", { queueName: q.name })} title="Messages of this queue">
                      {q.name}
                    </a>{" "}
                    {q.paused && <Badge tone="warn">paused</Badge>}
                  </td>
                  <td class="num" data-label="lag">
                    {formatCount(q.lag)}
                  </td>
                  <td>
                    <Parallelism key={`${q.name}-${q.parallelism}`} q={q} />
                  </td>
                  <td class="hide-narrow nowrap">{formatTime(q.updatedAt)}</td>
                  <td class="row-actions">
                    <button data-write type="button" class="small" onClick={() => act(q.paused ? "Resume" : "Pause", () => api(`/v2/queues/${enc(q.name)}/${q.paused ? "resume" : "pause"}`, { method: "POST" }), () => `${q.paused ? "Resumed" : "Paused"} ${q.name}`)}>
                      {q.paused ? "Resume" : "Pause"}
                    </button>
                    <button data-write type="button" class="small danger" onClick={() => confirm(`Delete queue ${q.name}? Its waiting messages are canceled.`) && act("Delete", () => api(`/v2/queues/${enc(q.name)}`, { method: "DELETE" }), () => `Deleted ${q.name}`)}>
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Card title="Create or update a queue">
        <form data-write
          class="inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            act("Save queue", () => upsert(name.trim(), { parallelism: Number(parallelism) }), () => `Saved ${name.trim()}`).then((ok) => ok !== undefined && setName(""));
          }}
        >
          <Field label="Name">
            <input required value={name} spellcheck={false} onInput={(e) => setName(e.currentTarget.value)} />
          </Field>
          <Field label="Parallelism">
            <input type="number" min={1} value={parallelism} onInput={(e) => setParallelism(e.currentTarget.value)} />
          </Field>
          <button type="submit" class="primary">
            Save
          </button>
        </form>
      </Card>
    </>
  );
}
