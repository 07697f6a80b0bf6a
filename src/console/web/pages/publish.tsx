import { useState } from "preact/hooks";
import { api } from "../api.ts";
import { href, useRoute } from "../router.ts";
import { configHeader, useStatus } from "../status.ts";
import { Card, PageHead } from "../ui/bits.tsx";
import { emptyOptions, Field, OptionFields, optionHeaders } from "../ui/options.tsx";
import { act } from "../ui/toast.tsx";

type Answer = { messageId: string; url?: string; deduplicated?: boolean } | Array<{ messageId: string; url?: string; error?: string }>;

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** A test message with any option, sent exactly as a client would send it (the curl shows how). */
export function PublishPage() {
  const status = useStatus().data;
  const prefix = status?.headerPrefix ?? "Svc";
  // A link may name the destination (a URL Group's "Publish").
  const [destination, setDestination] = useState(useRoute().query.get("destination") ?? "");
  const [queue, setQueue] = useState("");
  const [o, setO] = useState(emptyOptions);
  const [answers, setAnswers] = useState<Array<{ at: number; answer: Answer }>>([]);

  const path = queue.trim() ? `/v2/enqueue/${encodeURIComponent(queue.trim())}/${destination.trim()}` : `/v2/publish/${destination.trim()}`;
  const headers = optionHeaders(o, prefix);
  const curl = [
    `curl -X POST "$${prefix === "Svc" ? "SVC" : "QSTASH"}_URL${path}"`,
    `-H "Authorization: Bearer $${prefix === "Svc" ? "SVC" : "QSTASH"}_TOKEN"`,
    ...Object.entries(headers).map(([k, v]) => `-H ${shellQuote(`${k}: ${v}`)}`),
    ...(o.body ? [`-d ${shellQuote(o.body)}`] : []),
  ].join(" \\\n  ");

  const send = async (e: Event) => {
    e.preventDefault();
    const answer = await act(
      "Publish",
      () => api<Answer>(path, { method: "POST", headers, body: o.body }),
      (a) => (Array.isArray(a) ? `Published ${a.length} messages` : a.deduplicated ? `Deduplicated: ${a.messageId}` : `Published ${a.messageId}`),
    );
    if (answer) setAnswers((list) => [{ at: Date.now(), answer }, ...list].slice(0, 10));
  };

  return (
    <>
      <PageHead title="Publish" sub={`Send a test message with any ${prefix}-* option, through the same API your clients use.`} />
      <div class="grid-2 wide-left">
        <Card>
          <form class="publish-form" onSubmit={send}>
            <div class="form-grid">
              <Field label="Destination" hint="a URL (http:// or https://) or a URL Group name" wide>
                <input required value={destination} placeholder="https://example.com/hook" spellcheck={false} onInput={(e) => setDestination(e.currentTarget.value)} />
              </Field>
              <Field label="Queue" hint="optional: enqueue into this queue (FIFO)">
                <input value={queue} spellcheck={false} onInput={(e) => setQueue(e.currentTarget.value)} />
              </Field>
            </div>
            <OptionFields o={o} set={setO} prefix={prefix} />
            <div class="form-actions">
              <button type="submit" class="primary" disabled={!destination.trim()}>
                Publish
              </button>
              <button type="button" onClick={() => setO(emptyOptions())}>
                Reset form
              </button>
            </div>
          </form>
        </Card>
        <div class="stack">
          <Card title="The same with curl">
            <pre class="code small">{curl}</pre>
          </Card>
          <Card title="Answers">
            {answers.length === 0 && <p class="empty">Published messages show here, with links to their timelines.</p>}
            <ul class="answers">
              {answers.flatMap(({ at, answer }) =>
                (Array.isArray(answer) ? answer : [answer]).map((a, i) => (
                  <li key={`${at}-${i}`}>
                    {a.messageId ? (
                      <a class="mono" href={href(`/messages/${a.messageId}`)}>
                        {a.messageId}
                      </a>
                    ) : (
                      <span class="bad-text">{(a as { error?: string }).error}</span>
                    )}
                    {a.url && <span class="muted small mono ellipsis">{a.url}</span>}
                  </li>
                )),
              )}
            </ul>
          </Card>
          <p class="muted small">
            Options use the <b>{status?.dialect ?? "svc"}</b> dialect's header prefix <code>{configHeader(status, "…")}</code>.
          </p>
        </div>
      </div>
    </>
  );
}
