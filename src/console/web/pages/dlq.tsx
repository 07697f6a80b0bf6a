import { useState } from "preact/hooks";
import { api } from "../api.ts";
import { deleteDlq, deleteDlqMatching, failedAt, readDlq, readDlqEntry, retryDlq, retryDlqMatching } from "../dlq-api.ts";
import { base64ToBytes, formatTime, plural, relative, textToBytes } from "../format.ts";
import { usePoll } from "../live.ts";
import { labelsOf } from "../logs.ts";
import { href, navigate, type Route } from "../router.ts";
import { useStatus } from "../status.ts";
import { AllMatching } from "../ui/bulk.tsx";
import { Card, Empty, ErrorBox, Fields, Loading, Mono, PageHead, StatusCode } from "../ui/bits.tsx";
import { apiFilters, FilterBar, type FilterField } from "../ui/filters.tsx";
import { Pager, useSelection } from "../ui/pager.tsx";
import { BodyView, HeadersView } from "../ui/payload.tsx";
import { ContextTags, LinkRow } from "../ui/rows.tsx";
import { act } from "../ui/toast.tsx";
import { MESSAGE_FILTERS } from "./messages.tsx";

const DLQ_FILTERS: FilterField[] = [
  ...MESSAGE_FILTERS.filter((f) => f.key !== "state"),
  { key: "responseStatus", label: "Answer status", placeholder: "500" },
  { key: "callerIp", label: "Caller IP" },
];

const bodyBytes = (text?: string, base64?: string) => (base64 ? base64ToBytes(base64) : text ? textToBytes(text) : undefined);

export function DlqPage({ route }: { route: Route }) {
  const id = route.path.split("/")[2];
  if (id) return <DlqDetail dlqId={decodeURIComponent(id)} />;
  return <DlqList route={route} />;
}

function DlqList({ route }: { route: Route }) {
  const query = apiFilters(DLQ_FILTERS, route.query);
  const key = JSON.stringify(query);
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const list = usePoll(() => readDlq({ ...query, count: 50, cursor }), `${key}|${cursor ?? ""}`);
  const now = useStatus().data?.clock.now ?? Date.now();
  const entries = list.data?.messages ?? [];
  const filtered = Object.keys(query).length > 0;
  const selection = useSelection(entries.map((e) => e.dlqId), key);
  const chosen = selection.chosen;

  return (
    <>
      <PageHead title="Dead-letter queue" sub="Messages whose retries ran out. Retry republishes one with its stored settings.">
        <AllMatching
          filtered={filtered}
          disabled={entries.length === 0}
          what={{ matching: "every DLQ entry matching the filters", all: "EVERY entry of the DLQ" }}
          after={() => {
            selection.clear();
            setCursor(undefined);
          }}
          actions={[
            { verb: "Retry", run: () => retryDlqMatching(query), done: (n) => `Retried ${plural(n, "message", "messages")}` },
            { verb: "Delete", danger: true, warning: "This cannot be undone.", run: () => deleteDlqMatching(query), done: (n) => `Deleted ${plural(n, "entry", "entries")}` },
          ]}
        />
      </PageHead>
      <FilterBar fields={DLQ_FILTERS} path="/dlq" />
      {chosen.length > 0 && (
        <div class="selection-bar" role="region" aria-label="Selected entries">
          <span>{chosen.length} selected</span>
          <button data-write
            type="button"
            class="primary"
            onClick={async () => {
              const answer = await act("Retry", () => api<{ responses: unknown[] }>("/v2/dlq/retry", { method: "POST", body: { dlqIds: chosen } }), (a) => `Retried ${a.responses.length}`);
              if (answer) selection.clear();
            }}
          >
            Retry selected
          </button>
          <button data-write
            type="button"
            class="danger"
            onClick={async () => {
              if (!confirm(`Delete ${chosen.length} DLQ entr${chosen.length === 1 ? "y" : "ies"}?`)) return;
              const answer = await act("Delete", () => api<{ deleted: number }>("/v2/dlq", { method: "DELETE", body: { dlqIds: chosen } }), (a) => `Deleted ${a.deleted}`);
              if (answer) selection.clear();
            }}
          >
            Delete selected
          </button>
          <button type="button" onClick={selection.clear}>
            Clear
          </button>
        </div>
      )}
      {list.error && <ErrorBox error={list.error} />}
      {list.loading && !list.data && <Loading />}
      {list.data && entries.length === 0 && <Empty>{filtered ? "No DLQ entry matches." : "The DLQ is empty: every message was delivered or is still trying."}</Empty>}
      {entries.length > 0 && (
        <div class="table-wrap">
          <table class="table" aria-label="DLQ entries">
            <thead>
              <tr>
                <th class="check">
                  <input
                    type="checkbox"
                    aria-label="Select all shown"
                    checked={selection.all}
                    onChange={selection.toggleAll}
                  />
                </th>
                <th>Failed</th>
                <th>Message</th>
                <th>Destination</th>
                <th>Answer</th>
                <th class="hide-narrow">Context</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {entries.map((e) => (
                <LinkRow key={e.dlqId} to={href(`/dlq/${e.dlqId}`)} selected={selection.has(e.dlqId)}>
                  <td class="check">
                    <input type="checkbox" aria-label={`Select ${e.dlqId}`} checked={selection.has(e.dlqId)} onChange={() => selection.toggle(e.dlqId)} />
                  </td>
                  <td class="nowrap" title={e.dlqId}>
                    {formatTime(failedAt(e))}
                    <div class="muted small">{relative(failedAt(e), now)}</div>
                  </td>
                  <td>
                    <a class="mono id" href={href(`/dlq/${e.dlqId}`)} title={e.messageId}>
                      {e.messageId}
                    </a>
                  </td>
                  <td class="mono ellipsis" title={e.url}>
                    {e.url}
                  </td>
                  <td>
                    <StatusCode status={e.responseStatus} />
                  </td>
                  <td class="hide-narrow">
                    <ContextTags e={{ ...e, labels: labelsOf(e) }} />
                  </td>
                  <td class="row-actions">
                    <button data-write type="button" class="small" onClick={() => act("Retry", () => retryDlq(e.dlqId), (a) => `Retried as ${a.messageId}`)}>
                      Retry
                    </button>
                    <button data-write type="button" class="small danger" aria-label={`Delete ${e.dlqId}`} onClick={() => act("Delete", () => deleteDlq(e.dlqId), () => `Deleted ${e.dlqId}`)}>
                      Delete
                    </button>
                  </td>
                </LinkRow>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager cursor={cursor} next={list.data?.cursor} go={setCursor} />
    </>
  );
}

function DlqDetail({ dlqId }: { dlqId: string }) {
  const { data: e, error } = usePoll(() => readDlqEntry(dlqId), `dlq-${dlqId}`, 5000);
  if (error) return <ErrorBox error={error} />;
  if (!e) return <Loading />;
  return (
    <>
      <PageHead title="DLQ entry" sub={<Mono>{dlqId}</Mono>}>
        <a class="button" href={href(`/messages/${e.messageId}`)}>
          Timeline
        </a>
        <button data-write
          type="button"
          class="primary"
          onClick={async () => {
            const answer = await act("Retry", () => retryDlq(dlqId), (a) => `Retried as ${a.messageId}`);
            if (answer) navigate(href(`/messages/${answer.messageId}`));
          }}
        >
          Retry
        </button>
        <button data-write
          type="button"
          class="danger"
          onClick={async () => {
            if (!confirm(`Delete DLQ entry ${dlqId}?`)) return;
            if (await act("Delete", () => deleteDlq(dlqId), () => `Deleted ${dlqId}`)) navigate(href("/dlq"));
          }}
        >
          Delete
        </button>
      </PageHead>
      <div class="grid-2">
        <Card title="Message">
          <Fields
            rows={[
              ["Message", <Mono>{e.messageId}</Mono>],
              ["Destination", <Mono>{e.url}</Mono>],
              ["Method", e.method],
              ["Created", formatTime(e.createdAt, { millis: true })],
              ["Failed", formatTime(failedAt(e), { millis: true })],
              ["Max retries", e.maxRetries],
              ["Callback", e.callback],
              ["Failure callback", e.failureCallback],
              ["Caller IP", e.callerIP],
              ["Context", <ContextTags e={{ ...e, labels: labelsOf(e) }} />],
            ]}
          />
        </Card>
        <Card title="Last answer">
          <Fields rows={[["Status", <StatusCode status={e.responseStatus} />], ["Error", e.error]]} />
          <HeadersView headers={e.responseHeader} empty="no answer headers" />
          <BodyView bytes={bodyBytes(e.responseBody, e.responseBodyBase64)} empty="no answer body" />
        </Card>
      </div>
      <div class="grid-2">
        <Card title="Request headers">
          <HeadersView headers={e.header} />
        </Card>
        <Card title="Request body">
          <BodyView bytes={bodyBytes(e.body, e.bodyBase64)} />
        </Card>
      </div>
    </>
  );
}
