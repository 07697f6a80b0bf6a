import type { ComponentChildren } from "preact";
import { fromLocalInput } from "../format.ts";

/** What a publish (or a schedule) is configured with; each maps to one `<Prefix>-*` header. */
export interface MessageOptions {
  method: string;
  contentType: string;
  body: string;
  delay: string;
  notBefore: string;
  retries: string;
  retryDelay: string;
  timeout: string;
  callback: string;
  failureCallback: string;
  label: string;
  deduplicationId: string;
  contentBasedDeduplication: boolean;
  flowControlKey: string;
  parallelism: string;
  rate: string;
  period: string;
  forward: Array<[string, string]>;
  extra: Array<[string, string]>;
}

export const emptyOptions = (): MessageOptions => ({
  method: "POST",
  contentType: "application/json",
  body: "",
  delay: "",
  notBefore: "",
  retries: "",
  retryDelay: "",
  timeout: "",
  callback: "",
  failureCallback: "",
  label: "",
  deduplicationId: "",
  contentBasedDeduplication: false,
  flowControlKey: "",
  parallelism: "",
  rate: "",
  period: "",
  forward: [["", ""]],
  extra: [["", ""]],
});

/** The request headers for these options, named in the server's dialect (`Svc-…` or `Upstash-…`). */
export function optionHeaders(o: MessageOptions, prefix: string): Record<string, string> {
  const h: Record<string, string> = {};
  const set = (suffix: string, value: string | undefined) => {
    if (value !== undefined && value.trim() !== "") h[`${prefix}-${suffix}`] = value.trim();
  };
  if (o.contentType.trim()) h["content-type"] = o.contentType.trim();
  if (o.method !== "POST") set("Method", o.method);
  set("Delay", o.delay);
  const notBefore = fromLocalInput(o.notBefore);
  if (notBefore !== undefined) set("Not-Before", String(Math.floor(notBefore / 1000)));
  set("Retries", o.retries);
  set("Retry-Delay", o.retryDelay);
  set("Timeout", o.timeout);
  set("Callback", o.callback);
  set("Failure-Callback", o.failureCallback);
  set("Label", o.label);
  set("Deduplication-Id", o.deduplicationId);
  if (o.contentBasedDeduplication) set("Content-Based-Deduplication", "true");
  set("Flow-Control-Key", o.flowControlKey);
  const flow = [o.parallelism && `parallelism=${o.parallelism}`, o.rate && `rate=${o.rate}`, o.period && `period=${o.period}`].filter(Boolean).join(", ");
  if (o.flowControlKey.trim() && flow) set("Flow-Control-Value", flow);
  for (const [name, value] of o.forward) if (name.trim()) set(`Forward-${name.trim()}`, value);
  for (const [name, value] of o.extra) if (name.trim() && value.trim()) h[name.trim()] = value.trim();
  return h;
}

export function Field({ label, hint, children, wide }: { label: string; hint?: string; children: ComponentChildren; wide?: boolean }) {
  return (
    <label class={`field ${wide ? "wide" : ""}`}>
      <span>{label}</span>
      {children}
      {hint && <small class="hint">{hint}</small>}
    </label>
  );
}

type Set = (next: MessageOptions) => void;

function Pairs({ pairs, onChange, namePlaceholder, label }: { pairs: Array<[string, string]>; onChange: (p: Array<[string, string]>) => void; namePlaceholder: string; label: string }) {
  return (
    <fieldset class="pairs wide">
      <legend>{label}</legend>
      {pairs.map(([name, value], i) => (
        <div class="pair" key={i}>
          <input aria-label={`${label} name ${i + 1}`} placeholder={namePlaceholder} value={name} spellcheck={false} onInput={(e) => onChange(pairs.map((p, j) => (j === i ? [e.currentTarget.value, p[1]] : p)))} />
          <input aria-label={`${label} value ${i + 1}`} placeholder="value" value={value} spellcheck={false} onInput={(e) => onChange(pairs.map((p, j) => (j === i ? [p[0], e.currentTarget.value] : p)))} />
          <button type="button" class="small" aria-label={`Remove ${label} ${i + 1}`} onClick={() => onChange(pairs.length > 1 ? pairs.filter((_, j) => j !== i) : [["", ""]])}>
            ✕
          </button>
        </div>
      ))}
      <button type="button" class="small" onClick={() => onChange([...pairs, ["", ""]])}>
        + Add
      </button>
    </fieldset>
  );
}

/** The fields of every `<Prefix>-*` option of a publish; `only` trims the list for schedules. */
export function OptionFields({ o, set, prefix, schedule = false }: { o: MessageOptions; set: Set; prefix: string; schedule?: boolean }) {
  const text = (key: keyof MessageOptions, placeholder = "") => (
    <input value={o[key] as string} placeholder={placeholder} spellcheck={false} onInput={(e) => set({ ...o, [key]: e.currentTarget.value })} />
  );
  return (
    <>
      <div class="form-grid">
        <Field label="Method">
          <select value={o.method} onChange={(e) => set({ ...o, method: e.currentTarget.value })}>
            {["POST", "GET", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"].map((m) => (
              <option key={m}>{m}</option>
            ))}
          </select>
        </Field>
        <Field label="Content-Type">{text("contentType", "application/json")}</Field>
        <Field label="Body" wide>
          <textarea rows={5} value={o.body} spellcheck={false} placeholder='{"hello": "world"}' onInput={(e) => set({ ...o, body: e.currentTarget.value })} />
        </Field>
      </div>
      <details class="options" open>
        <summary>Delivery</summary>
        <div class="form-grid">
          <Field label="Delay" hint={`${prefix}-Delay: 10s, 5m, 1d2h`}>{text("delay", "0s")}</Field>
          {!schedule && (
            <Field label="Not before" hint={`${prefix}-Not-Before`}>
              <input type="datetime-local" value={o.notBefore} onInput={(e) => set({ ...o, notBefore: e.currentTarget.value })} />
            </Field>
          )}
          <Field label="Retries" hint={`${prefix}-Retries (default 3)`}>{text("retries", "3")}</Field>
          <Field label="Retry delay" hint={`${prefix}-Retry-Delay, ms: pow(2, retried) * 1000`}>{text("retryDelay")}</Field>
          <Field label="Timeout" hint={`${prefix}-Timeout: 30s, 5m`}>{text("timeout")}</Field>
          <Field label="Label" hint={`${prefix}-Label; several comma-separated`}>{text("label")}</Field>
        </div>
      </details>
      <details class="options">
        <summary>Callbacks</summary>
        <div class="form-grid">
          <Field label="Callback URL" hint={`${prefix}-Callback`}>{text("callback", "https://…")}</Field>
          <Field label="Failure callback URL" hint={`${prefix}-Failure-Callback`}>{text("failureCallback", "https://…")}</Field>
        </div>
      </details>
      <details class="options">
        <summary>Flow control{schedule ? "" : " and deduplication"}</summary>
        <div class="form-grid">
          <Field label="Flow-control key" hint={`${prefix}-Flow-Control-Key`}>{text("flowControlKey")}</Field>
          <Field label="Parallelism">{text("parallelism")}</Field>
          <Field label="Rate">{text("rate")}</Field>
          <Field label="Period" hint="1s, 1m">{text("period")}</Field>
          {!schedule && <Field label="Deduplication id" hint={`${prefix}-Deduplication-Id`}>{text("deduplicationId")}</Field>}
          {!schedule && (
            <label class="check-field">
              <input type="checkbox" checked={o.contentBasedDeduplication} onChange={(e) => set({ ...o, contentBasedDeduplication: e.currentTarget.checked })} />
              Content-based deduplication
            </label>
          )}
        </div>
      </details>
      <details class="options">
        <summary>Headers</summary>
        <div class="form-grid">
          <Pairs label="Forwarded headers" namePlaceholder="X-Trace-Id" pairs={o.forward} onChange={(forward) => set({ ...o, forward })} />
          <Pairs label={`Other ${prefix}-* headers`} namePlaceholder={`${prefix}-Callback-Retries`} pairs={o.extra} onChange={(extra) => set({ ...o, extra })} />
        </div>
      </details>
    </>
  );
}
