import { useState } from "preact/hooks";
import { api } from "../api.ts";
import { usePoll } from "../live.ts";
import { Card, Empty, ErrorBox, Mono } from "../ui/bits.tsx";
import { Field } from "../ui/options.tsx";
import { act } from "../ui/toast.tsx";

interface FaultRule {
  id: string;
  kind: string;
  match?: Record<string, string>;
  probability?: number;
  seed: number;
  every?: number;
  times?: number;
  matched: number;
  fired: number;
  [field: string]: unknown;
}

const EXAMPLE = '{"kind": "rate-limit", "scope": "daily", "times": 1, "match": {"route": "/v2/publish"}}';
const FIRING = ["probability", "every", "times"] as const;
const SHOWN = new Set(["id", "kind", "match", "seed", "matched", "fired", "createdAt", ...FIRING]);

function firing(r: FaultRule): string {
  if (r.probability !== undefined) return `p=${r.probability}, seed ${r.seed}`;
  if (r.every !== undefined) return `every ${r.every}`;
  if (r.times !== undefined) return `next ${r.times}`;
  return "always";
}

/** What the rule does beyond its kind (delayMs, status, scope, limit, message). */
const settingsOf = (r: FaultRule) => Object.fromEntries(Object.entries(r).filter(([k]) => !SHOWN.has(k)));

const describe = (fields: Record<string, unknown> | undefined) =>
  Object.entries(fields ?? {})
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(", ");

/** The account's fault rules (docs/test-double.md, Fault injection): listed with their counters, added as JSON, removed. */
export function FaultRulesCard() {
  const list = usePoll(() => api<{ rules: FaultRule[] }>("/__svc/faults"), "faults");
  const [text, setText] = useState("");
  const rules = list.data?.rules ?? [];
  const add = () =>
    act("Add fault rule", () => api<FaultRule>("/__svc/faults", { method: "POST", body: JSON.parse(text || EXAMPLE) }), (r) => {
      setText("");
      return `Rule ${r.id} added`;
    });
  const remove = (id?: string) =>
    act(
      id ? "Remove rule" : "Remove all rules",
      () => api(id ? `/__svc/faults/${id}` : "/__svc/faults", { method: "DELETE" }),
      () => (id ? `Rule ${id} removed` : "Every rule removed"),
    );
  const removeAll = (
    <button type="button" class="small danger" onClick={() => remove()}>
      Remove all
    </button>
  );

  return (
    <Card title="Fault rules" actions={rules.length > 0 && removeAll}>
      <p class="muted">
        Injected failures of this account's deliveries and API answers. Every one is marked in the logs, the message timeline and{" "}
        <code>svcd_faults_injected_total</code>. Reset removes them.
      </p>
      {list.error && <ErrorBox error={list.error} />}
      {list.data && rules.length === 0 && <Empty>No fault rules.</Empty>}
      {rules.length > 0 && (
        <div class="table-wrap">
          <table class="table" aria-label="Fault rules">
            <thead>
              <tr>
                <th>Rule</th>
                <th>Kind</th>
                <th>Matches</th>
                <th>Fires</th>
                <th>Matched / fired</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {rules.map((r) => (
                <tr key={r.id}>
                  <td>
                    <Mono>{r.id}</Mono>
                  </td>
                  <td>
                    {r.kind} <span class="muted small">{describe(settingsOf(r))}</span>
                  </td>
                  <td>{describe(r.match) || "everything"}</td>
                  <td>{firing(r)}</td>
                  <td>
                    {r.matched} / {r.fired}
                  </td>
                  <td>
                    <button type="button" class="small" aria-label={`Remove ${r.id}`} onClick={() => remove(r.id)}>
                      Remove
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <form
        class="stack"
        onSubmit={(e) => {
          e.preventDefault();
          add();
        }}
      >
        <Field label="New rule (JSON)" hint="kind, match, and one of probability (with seed), every, times" wide>
          <textarea
            name="fault-rule"
            rows={3}
            placeholder={EXAMPLE}
            value={text}
            onInput={(e) => setText(e.currentTarget.value)}
            spellcheck={false}
          />
        </Field>
        <button type="submit">Add rule</button>
      </form>
    </Card>
  );
}
