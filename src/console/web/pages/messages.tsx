import { useEffect, useState } from "preact/hooks";
import { formatTime, relative } from "../format.ts";
import { usePoll } from "../live.ts";
import { labelsOf, MESSAGE_STATES, readLogs, type LogEntry } from "../logs.ts";
import type { Route } from "../router.ts";
import { href } from "../router.ts";
import { useStatus } from "../status.ts";
import { Empty, ErrorBox, Loading, PageHead, StateBadge, StatusCode } from "../ui/bits.tsx";
import { apiFilters, FilterBar, type FilterField } from "../ui/filters.tsx";
import { ContextTags, LinkRow } from "../ui/rows.tsx";
import { MessageDetail } from "./message-detail.tsx";

/** Filters of the logs (several values comma-separated: any of them matches). */
export const MESSAGE_FILTERS: FilterField[] = [
  { key: "state", label: "State", kind: "select", options: MESSAGE_STATES },
  { key: "messageId", label: "Message id", placeholder: "msg_…" },
  { key: "label", label: "Label", placeholder: "a, b" },
  { key: "url", label: "URL", placeholder: "https://…" },
  { key: "host", label: "Host", placeholder: "api.example.com" },
  { key: "path", label: "Path", placeholder: "/hook" },
  { key: "topicName", label: "URL Group" },
  { key: "queueName", label: "Queue" },
  { key: "scheduleId", label: "Schedule" },
  { key: "flowControlKey", label: "Flow-control key" },
  { key: "fromDate", label: "From", kind: "datetime" },
  { key: "toDate", label: "To", kind: "datetime" },
];

const PAGE_SIZE = 50;
const entryKey = (e: LogEntry) => `${e.messageId}|${e.time}|${e.state}`;

export function MessagesPage({ route }: { route: Route }) {
  const id = route.path.split("/")[2];
  if (id) return <MessageDetail id={decodeURIComponent(id)} />;
  return <MessageList route={route} />;
}

function MessageList({ route }: { route: Route }) {
  const query = apiFilters(MESSAGE_FILTERS, route.query);
  const key = JSON.stringify(query);
  // The first page follows live; older pages, once loaded, stay as they are.
  const first = usePoll(() => readLogs({ ...query, count: PAGE_SIZE }), key);
  const [older, setOlder] = useState<LogEntry[]>([]);
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const [loadingMore, setLoadingMore] = useState(false);
  useEffect(() => {
    setOlder([]);
    setCursor(undefined);
  }, [key]);
  const now = useStatus().data?.clock.now ?? Date.now();

  const seen = new Set<string>();
  const entries = [...(first.data?.logs ?? []), ...older].filter((e) => {
    const k = entryKey(e);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  const nextCursor = older.length > 0 ? cursor : first.data?.cursor;

  const loadMore = async () => {
    if (!nextCursor) return;
    setLoadingMore(true);
    try {
      const page = await readLogs({ ...query, count: PAGE_SIZE, cursor: nextCursor });
      setOlder((o) => [...o, ...page.logs]);
      setCursor(page.cursor ?? "");
    } finally {
      setLoadingMore(false);
    }
  };

  return (
    <>
      <PageHead title="Messages" sub="Every state change of every message (the log), newest first. Open a message for its timeline." />
      <FilterBar fields={MESSAGE_FILTERS} path="/messages" />
      {first.error && <ErrorBox error={first.error} />}
      {first.loading && !first.data && <Loading />}
      {first.data && entries.length === 0 && <Empty>No log entries match.</Empty>}
      {entries.length > 0 && (
        <div class="table-wrap">
          <table class="table" aria-label="Log entries">
            <thead>
              <tr>
                <th>Time</th>
                <th>State</th>
                <th>Message</th>
                <th>Destination</th>
                <th class="hide-narrow">Context</th>
                <th>Answer</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((e) => (
                <LinkRow key={entryKey(e)} to={href(`/messages/${e.messageId}`)}>
                  <td class="nowrap" title={formatTime(e.time, { millis: true })}>
                    {formatTime(e.time)}
                    <div class="muted small">{relative(e.time, now)}</div>
                  </td>
                  <td>
                    <StateBadge state={e.state} />
                  </td>
                  <td>
                    <a class="mono id" href={href(`/messages/${e.messageId}`)} title={e.messageId}>
                      {e.messageId}
                    </a>
                  </td>
                  <td class="mono ellipsis" title={e.url}>
                    {e.method && e.method !== "POST" ? `${e.method} ` : ""}
                    {e.url}
                  </td>
                  <td class="hide-narrow">
                    <ContextTags e={{ ...e, labels: labelsOf(e) }} />
                  </td>
                  <td>
                    {e.responseStatus !== undefined ? <StatusCode status={e.responseStatus} /> : e.error ? <span class="bad-text small">{e.error}</span> : null}
                  </td>
                </LinkRow>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {nextCursor && (
        <p class="more">
          <button type="button" onClick={loadMore} disabled={loadingMore}>
            {loadingMore ? "Loading…" : "Load older entries"}
          </button>
        </p>
      )}
    </>
  );
}
