import { useState } from "preact/hooks";
import { api } from "../api.ts";
import { formatTime } from "../format.ts";
import { usePoll } from "../live.ts";
import { href } from "../router.ts";
import { Card, Empty, ErrorBox, Loading, Mono, PageHead } from "../ui/bits.tsx";
import { Field } from "../ui/options.tsx";
import { act } from "../ui/toast.tsx";

interface Endpoint {
  name?: string;
  url: string;
}
interface UrlGroup {
  name: string;
  createdAt: number;
  updatedAt: number;
  endpoints: Endpoint[];
}

const enc = encodeURIComponent;
const addEndpoint = (group: string, endpoint: Endpoint) => api(`/v2/topics/${enc(group)}/endpoints`, { method: "POST", body: { endpoints: [endpoint] } });

function AddEndpoint({ group, onDone }: { group?: string; onDone?: () => void }) {
  const [name, setName] = useState(group ?? "");
  const [url, setUrl] = useState("");
  const [endpointName, setEndpointName] = useState("");
  return (
    <form data-write
      class="inline-form"
      onSubmit={async (e) => {
        e.preventDefault();
        const target = (group ?? name).trim();
        const endpoint: Endpoint = { url: url.trim(), ...(endpointName.trim() ? { name: endpointName.trim() } : {}) };
        if (await act("Add endpoint", () => addEndpoint(target, endpoint), () => `Added ${endpoint.url} to ${target}`)) {
          setUrl("");
          setEndpointName("");
          onDone?.();
        }
      }}
    >
      {!group && (
        <Field label="Group name">
          <input required value={name} spellcheck={false} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
      )}
      <Field label="Endpoint URL">
        <input required value={url} placeholder="https://…" spellcheck={false} onInput={(e) => setUrl(e.currentTarget.value)} />
      </Field>
      <Field label="Endpoint name (optional)">
        <input value={endpointName} spellcheck={false} onInput={(e) => setEndpointName(e.currentTarget.value)} />
      </Field>
      <button type="submit" class="primary">
        {group ? "Add endpoint" : "Create group"}
      </button>
    </form>
  );
}

export function UrlGroupsPage() {
  const list = usePoll(() => api<UrlGroup[]>("/v2/topics"), "topics");
  const groups = [...(list.data ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  return (
    <>
      <PageHead title="URL Groups" sub="A publish to a group sends one message to each of its endpoints." />
      {list.error && <ErrorBox error={list.error} />}
      {list.loading && !list.data && <Loading />}
      {list.data && groups.length === 0 && <Empty>No URL Groups yet.</Empty>}
      {groups.map((g) => (
        <div key={g.name} data-group={g.name}>
          <Card
            title={
              <>
                {g.name} <span class="muted small">{g.endpoints.length} endpoint{g.endpoints.length === 1 ? "" : "s"}</span>
              </>
            }
            actions={
              <>
                <a href={href("/messages", { topicName: g.name })}>Messages</a>
                <a class="button small" href={href("/publish", { destination: g.name })} title="Publish to this group">
                  Publish
                </a>
                <button data-write type="button" class="small danger" onClick={() => confirm(`Delete URL Group ${g.name}?`) && act("Delete group", () => api(`/v2/topics/${enc(g.name)}`, { method: "DELETE" }), () => `Deleted ${g.name}`)}>
                  Delete group
                </button>
              </>
            }
          >
            <table class="table compact" aria-label={`Endpoints of ${g.name}`}>
              <thead>
                <tr>
                  <th>Name</th>
                  <th>URL</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {g.endpoints.map((ep) => (
                  <tr key={`${ep.name ?? ""}|${ep.url}`} data-endpoint={ep.url}>
                    <td>{ep.name ?? <span class="muted">—</span>}</td>
                    <td class="ellipsis">
                      <Mono>{ep.url}</Mono>
                    </td>
                    <td class="row-actions">
                      <button data-write
                        type="button"
                        class="small danger"
                        onClick={() =>
                          (g.endpoints.length > 1 || confirm(`${ep.url} is the last endpoint: removing it deletes ${g.name}. Go on?`)) &&
                          act("Remove endpoint", () => api(`/v2/topics/${enc(g.name)}/endpoints`, { method: "DELETE", body: { endpoints: [ep.name ? { name: ep.name, url: ep.url } : { url: ep.url }] } }), () => `Removed ${ep.url}`)
                        }
                      >
                        Remove
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <AddEndpoint group={g.name} />
            <p class="muted small">Updated {formatTime(g.updatedAt)}</p>
          </Card>
        </div>
      ))}
      <Card title="New URL Group" class="new-group">
        <AddEndpoint />
      </Card>
    </>
  );
}
