import type { ComponentChildren } from "preact";
import { ApiError } from "../api.ts";

/** Title row of a page, with its actions on the right. */
export function PageHead({ title, sub, children }: { title: string; sub?: ComponentChildren; children?: ComponentChildren }) {
  return (
    <header class="page-head">
      <div>
        <h1>{title}</h1>
        {sub && <p class="sub">{sub}</p>}
      </div>
      {children && <div class="actions">{children}</div>}
    </header>
  );
}

export function Card({ title, children, actions, class: cls }: { title?: ComponentChildren; children: ComponentChildren; actions?: ComponentChildren; class?: string }) {
  return (
    <section class={`card ${cls ?? ""}`}>
      {(title || actions) && (
        <div class="card-head">
          {title && <h2>{title}</h2>}
          {actions && <div class="actions">{actions}</div>}
        </div>
      )}
      {children}
    </section>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

/** What went wrong reading a view; a 404 of an API the server does not have yet reads kindly. */
export function ErrorBox({ error }: { error: Error }) {
  const status = error instanceof ApiError ? error.status : undefined;
  return (
    <p class="error-box" role="alert">
      {status ? `${status}: ` : ""}
      {error.message}
    </p>
  );
}

export function Loading() {
  return <p class="empty" aria-busy="true">Loading…</p>;
}

const STATE_TONE: Record<string, string> = {
  CREATED: "info",
  ACTIVE: "info",
  RETRY: "warn",
  ERROR: "bad",
  DELIVERED: "good",
  FAILED: "bad",
  CANCEL_REQUESTED: "muted",
  CANCELED: "muted",
  SUCCESS: "good",
  FAIL: "bad",
  IN_PROGRESS: "info",
  RUN_STARTED: "info",
  RUN_SUCCESS: "good",
  RUN_FAILED: "bad",
  RUN_CANCELED: "muted",
  STEP_SUCCESS: "good",
  STEP_RETRY: "warn",
  STEP_FAILED: "bad",
  STEP_PROGRESS: "info",
  STEP_CANCELED: "muted",
  CALLBACK_INPROGRESS: "info",
  CALLBACK_SUCCESS: "good",
  CALLBACK_FAIL: "bad",
  CALLBACK_CANCELED: "muted",
};

export function Badge({ tone = "muted", children, title }: { tone?: string; children: ComponentChildren; title?: string }) {
  return (
    <span class={`badge ${tone}`} title={title}>
      {children}
    </span>
  );
}

export const StateBadge = ({ state }: { state: string }) => <Badge tone={STATE_TONE[state] ?? "muted"}>{state}</Badge>;

/** HTTP status of an answer: 2xx green, 4xx/5xx red, 0 = no answer. */
export function StatusCode({ status }: { status: number | undefined }) {
  if (status === undefined) return <span class="muted">—</span>;
  const tone = status >= 200 && status < 300 ? "good" : status === 0 ? "muted" : "bad";
  return <Badge tone={tone} title={status === 0 ? "no HTTP answer" : undefined}>{status === 0 ? "no answer" : status}</Badge>;
}

/** A definition list of label → value, skipping empty values. */
export function Fields({ rows }: { rows: Array<[string, ComponentChildren]> }) {
  return (
    <dl class="fields">
      {rows
        .filter(([, v]) => v !== undefined && v !== null && v !== "")
        .map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
    </dl>
  );
}

export function Mono({ children }: { children: ComponentChildren }) {
  return <code class="mono">{children}</code>;
}
