import { api, ApiError } from "../api.ts";
import { dlqEntryOf, retryDlq, type DlqEntry } from "../dlq-api.ts";
import { base64ToBytes, formatDuration, formatTime, relative, textToBytes } from "../format.ts";
import { usePoll } from "../live.ts";
import { labelsOf, readLogs, type LogEntry } from "../logs.ts";
import { href, navigate } from "../router.ts";
import { useStatus } from "../status.ts";
import { Badge, Card, ErrorBox, Fields, Loading, Mono, PageHead, StateBadge, StatusCode } from "../ui/bits.tsx";
import { BodyView, HeadersView } from "../ui/payload.tsx";
import { ContextTags } from "../ui/rows.tsx";
import { act } from "../ui/toast.tsx";

/** A message still waiting for delivery, as `GET /v2/messages/{id}` answers it. */
interface PendingMessage {
  messageId: string;
  url: string;
  method: string;
  header?: Record<string, string[]>;
  body?: string;
  bodyBase64?: string;
  maxRetries: number;
  notBefore: number;
  createdAt: number;
  callback?: string;
  failureCallback?: string;
  retryDelayExpression?: string;
  label?: string;
  labels?: string[];
}

const FINAL = new Set(["DELIVERED", "FAILED", "CANCELED"]);
// Each attempt logs one ERROR or DELIVERED; FAILED repeats the last ERROR when the retries ran out.
const ATTEMPT_STATES = new Set(["ERROR", "DELIVERED"]);

async function readMessage(id: string) {
  const logs = await readLogs({ messageId: id, count: 1000 });
  // The log answers newest first, in the order things happened (times can tie on a manual clock).
  const timeline = [...logs.logs].reverse();
  // Only a message that has not finished can still be read (and canceled) by id.
  const finished = timeline.some((e) => FINAL.has(e.state));
  const pending = finished
    ? null
    : await api<PendingMessage>(`/v2/messages/${encodeURIComponent(id)}`).catch((e) => {
        if (e instanceof ApiError && e.status === 404) return null;
        throw e;
      });
  const failed = timeline.some((e) => e.state === "FAILED");
  const dlq: DlqEntry | null = failed ? await dlqEntryOf(id) : null;
  return { timeline, pending, dlq };
}

/** One message: its timeline of states, every attempt with its answer, headers and body. */
export function MessageDetail({ id }: { id: string }) {
  const { data, error } = usePoll(() => readMessage(id), `message-${id}`, 1500);
  const now = useStatus().data?.clock.now ?? Date.now();
  if (error) return <ErrorBox error={error} />;
  if (!data) return <Loading />;
  const { timeline, pending, dlq } = data;
  const created = timeline.find((e) => e.state === "CREATED") ?? timeline[0];
  const traceId = timeline.find((e) => e.traceId)?.traceId;
  const last = timeline[timeline.length - 1];
  const attempts = timeline.filter((e) => ATTEMPT_STATES.has(e.state) && (e.responseStatus !== undefined || e.error));
  const header = pending?.header ?? created?.header;
  const body = pending ? (pending.bodyBase64 ? base64ToBytes(pending.bodyBase64) : textToBytes(pending.body ?? "")) : created?.body ? base64ToBytes(created.body) : undefined;

  return (
    <>
      <PageHead
        title="Message"
        sub={
          <>
            <Mono>{id}</Mono> {last && <StateBadge state={last.state} />}
          </>
        }
      >
        {pending && (
          <button data-write
            type="button"
            class="danger"
            onClick={() => confirm(`Cancel message ${id}?`) && act("Cancel", () => api(`/v2/messages/${encodeURIComponent(id)}`, { method: "DELETE" }), () => `Canceled ${id}`)}
          >
            Cancel message
          </button>
        )}
        {dlq && (
          <>
            <a class="button" href={href(`/dlq/${dlq.dlqId}`)}>
              DLQ entry
            </a>
            <button data-write
              type="button"
              class="primary"
              onClick={async () => {
                const answer = await act("Retry", () => retryDlq(dlq.dlqId), (a) => `Retried as ${a.messageId}`);
                if (answer) navigate(href(`/messages/${answer.messageId}`));
              }}
            >
              Retry from DLQ
            </button>
          </>
        )}
      </PageHead>

      {timeline.length === 0 && !pending && (
        <ErrorBox error={new Error(`No log entries for ${id}: unknown id, or its history passed the plan's log retention.`)} />
      )}

      <div class="grid-2 wide-left">
        <Card title="Timeline">
          <ol class="timeline" aria-label="States of the message, oldest first">
            {timeline.map((e, i) => (
              <li key={`${e.time}-${e.state}-${i}`} class={`tl-${e.state.toLowerCase()}`}>
                <StateBadge state={e.state} />
                <time title={formatTime(e.time, { millis: true })}>{formatTime(e.time, { millis: true })}</time>
                {created && i > 0 && <span class="muted small">+{formatDuration(e.time - created.time)}</span>}
                <TimelineNote e={e} now={now} />
                <FaultBadge e={e} />
              </li>
            ))}
            {pending && !FINAL.has(last?.state ?? "") && (
              <li class="tl-pending">
                <span class="badge muted">PENDING</span>
                <span class="muted small">next attempt {relative(Math.max(pending.notBefore, last?.nextDeliveryTime ?? 0), now)}</span>
              </li>
            )}
          </ol>
        </Card>
        <Card title="Message">
          <Fields
            rows={[
              ["Destination", created?.url ?? pending?.url ? <Mono>{created?.url ?? pending?.url}</Mono> : undefined],
              ["Method", created?.method ?? pending?.method],
              ["Created", created ? formatTime(created.time, { millis: true }) : pending ? formatTime(pending.createdAt) : undefined],
              ["Not before", pending && pending.notBefore > pending.createdAt ? formatTime(pending.notBefore) : undefined],
              ["Retries", created?.maxRetries !== undefined ? `${Math.max(0, attempts.length - 1)} of ${created.maxRetries}` : undefined],
              ["Retry delay", pending?.retryDelayExpression ?? created?.retryDelayExpression],
              ["Callback", pending?.callback],
              ["Failure callback", pending?.failureCallback],
              ["Context", created ? <ContextTags e={{ ...created, labels: labelsOf(created) }} /> : undefined],
              ["Trace", traceId ? <Mono>{traceId}</Mono> : undefined],
            ]}
          />
        </Card>
      </div>

      <Card title={`Attempts (${attempts.length})`}>
        {attempts.length === 0 && <p class="empty">No attempt has finished yet.</p>}
        {attempts.map((a, i) => (
          <details key={`${a.time}-${i}`} class="attempt" open={i === attempts.length - 1}>
            <summary>
              <span>Attempt {i + 1}</span>
              <StatusCode status={a.responseStatus ?? (a.error ? 0 : undefined)} />
              <time class="muted small">{formatTime(a.time, { millis: true })}</time>
              <FaultBadge e={a} />
              {a.error && <span class="bad-text small ellipsis">{a.error}</span>}
            </summary>
            <BodyView bytes={a.responseBody ? base64ToBytes(a.responseBody) : undefined} empty="no answer body" />
          </details>
        ))}
      </Card>

      <div class="grid-2">
        <Card title="Request headers">
          <HeadersView headers={header} />
        </Card>
        <Card title="Request body">
          <BodyView bytes={body} />
        </Card>
      </div>
    </>
  );
}

function TimelineNote({ e, now }: { e: LogEntry; now: number }) {
  if (e.state === "RETRY" && e.nextDeliveryTime) return <span class="muted small">next attempt {relative(e.nextDeliveryTime, now)}</span>;
  if (e.responseStatus !== undefined) return <StatusCode status={e.responseStatus} />;
  if (e.error) return <span class="bad-text small">{e.error}</span>;
  return null;
}

/** An injected failure must never pass for a real one: the attempt says which rule made it. */
function FaultBadge({ e }: { e: LogEntry }) {
  if (!e.fault) return null;
  return (
    <Badge tone="warn" title={`Injected by fault rule ${e.fault.rule} (Test double page)`}>
      injected: {e.fault.kind}
    </Badge>
  );
}
