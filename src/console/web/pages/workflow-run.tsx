import { useState } from "preact/hooks";
import { formatDuration, formatTime, prettyText } from "../format.ts";
import { usePoll } from "../live.ts";
import { labelsOf } from "../logs.ts";
import { href } from "../router.ts";
import { Badge, Card, ErrorBox, Fields, Loading, Mono, PageHead, StateBadge, StatusCode } from "../ui/bits.tsx";
import { ContextTags } from "../ui/rows.tsx";
import { failedStepName, readRun, restartRun, resumeRun, type StepGroup, type StepLog, type WorkflowRun } from "../workflows-api.ts";
import { cancelRun, openStartedRun } from "./workflow-actions.tsx";
import { RerunDialog, RerunSource, type RerunChoice } from "./workflow-rerun.tsx";

/** Opens the rerun dialog for a step of the group at `groupIndex` (null: no rerun from it). */
type Rerun = (fromStep: string | number, title: string, groupIndex: number) => void;

function RerunButton({ onClick }: { onClick: () => void }) {
  return (
    <button data-write type="button" class="small" title="A new run that keeps the steps before this one and runs this one again"
      onClick={onClick}>
      Rerun from here
    </button>
  );
}

/** A step's result as the SDK stored it: JSON text or a value; pretty-printed either way. */
export function showValue(value: unknown): string {
  if (value === undefined) return "";
  if (typeof value === "string") return prettyText(value);
  return JSON.stringify(value, null, 2);
}

const NEXT_TITLE: Record<string, string> = {
  STEP_PROGRESS: "waiting for delivery",
  STEP_RETRY: "retrying",
  STEP_FAILED: "failed: retries ran out",
  STEP_CANCELED: "canceled",
};

/** What kind of step it was, beyond its result: a sleep, a wait for an event, a call. */
function StepKind({ s }: { s: StepLog }) {
  const parts: string[] = [];
  if (s.sleepFor !== undefined) parts.push(`slept ${typeof s.sleepFor === "number" ? formatDuration(s.sleepFor * 1000) : s.sleepFor}`);
  if (s.sleepUntil !== undefined) parts.push(`slept until ${formatTime(s.sleepUntil * 1000)}`);
  if (s.waitEventId) parts.push(`waited for event ${s.waitEventId}${s.waitTimeout ? " (timed out)" : ""}`);
  if (s.callUrl) parts.push(`called ${s.callMethod ?? "POST"} ${s.callUrl}`);
  if (parts.length === 0) return null;
  return <p class="muted small">{parts.join(" · ")}</p>;
}

function Step({ s, rerun }: { s: StepLog; rerun?: () => void }) {
  const out = showValue(s.out);
  return (
    <div class="wf-step" data-step={s.stepName ?? s.messageId}>
      <div class="wf-step-head">
        <b>{s.stepName ?? <span class="muted">delivery</span>}</b>
        {s.stepType && <Badge>{s.stepType}</Badge>}
        <StateBadge state={s.state} />
        {s.callResponseStatus !== undefined && <StatusCode status={s.callResponseStatus} />}
        {s.createdAt !== undefined && <time class="muted small">{formatTime(s.createdAt, { millis: true })}</time>}
        {rerun && <RerunButton onClick={rerun} />}
      </div>
      <StepKind s={s} />
      {out && <pre class="code small wf-out">{out}</pre>}
      {s.messageId && (
        <a class="mono small" href={href(`/messages/${s.messageId}`)}>
          {s.messageId}
        </a>
      )}
    </div>
  );
}

/** A message of the run not yet delivered: its state, retries and each failed attempt. */
function NextStep({ s, failedStep, rerun }: { s: StepLog; failedStep?: string; rerun?: () => void }) {
  const name = s.stepName ?? (s.state === "STEP_FAILED" ? failedStep : undefined);
  return (
    <div class="wf-step" data-step={name ?? s.messageId}>
      <div class="wf-step-head">
        <b>{name ?? "next step"}</b>
        <StateBadge state={s.state} />
        <span class="muted small">{NEXT_TITLE[s.state] ?? ""}</span>
        {s.retries !== undefined && <span class="muted small">retries {s.retries}</span>}
        {rerun && <RerunButton onClick={rerun} />}
      </div>
      {s.errors?.map((e, i) => (
        <details key={i} class="attempt" open={i === s.errors!.length - 1}>
          <summary>
            <StatusCode status={e.status} />
            <span class="bad-text small">{e.error}</span>
            <time class="muted small">{formatTime(e.time, { millis: true })}</time>
          </summary>
          {e.body && <pre class="code small wf-out">{prettyText(e.body)}</pre>}
        </details>
      ))}
      {s.messageId && (
        <a class="mono small" href={href(`/messages/${s.messageId}`)}>
          {s.messageId}
        </a>
      )}
    </div>
  );
}

/** A step the run's log names can be rerun from; a failed one by the name its failing answer gave. */
function rerunOf(s: StepLog, index: number, rerun: Rerun): (() => void) | undefined {
  if (s.stepType === "Initial") return () => rerun("init", "the start", index);
  if (s.stepId !== undefined) return () => rerun(s.stepId!, s.stepName ?? `step ${s.stepId}`, index);
  return s.state === "STEP_FAILED" && s.stepName ? () => rerun(s.stepName!, s.stepName!, index) : undefined;
}

function Group({ g, index, failedStep, rerun }: { g: StepGroup; index: number; failedStep?: string; rerun: Rerun }) {
  if (g.type === "next")
    return (
      <li class="wf-group next">
        <span class="wf-group-label">{g.steps.some((s) => s.state === "STEP_PROGRESS" || s.state === "STEP_RETRY") ? "under way" : "not delivered"}</span>
        {g.steps.map((s, i) => (
          <NextStep key={s.messageId ?? i} s={s} failedStep={failedStep} rerun={rerunOf(s, index, rerun)} />
        ))}
      </li>
    );
  if (g.type === "parallel")
    return (
      <li class="wf-group parallel">
        <span class="wf-group-label">parallel · {g.steps.length} branches</span>
        <div class="wf-branches">
          {g.steps.map((s, i) => (
            <Step key={s.stepId ?? i} s={s} rerun={rerunOf(s, index, rerun)} />
          ))}
        </div>
      </li>
    );
  return (
    <li class="wf-group">
      <Step s={g.steps[0]!} rerun={rerunOf(g.steps[0]!, index, rerun)} />
    </li>
  );
}

function RunActions({ run }: { run: WorkflowRun }) {
  return (
    <>
      {run.workflowState === "RUN_STARTED" && (
        <button data-write type="button" class="danger" onClick={() => cancelRun(run.workflowRunId)}>
          Cancel run
        </button>
      )}
      {run.dlqId && (
        <>
          <a class="button" href={href(`/dlq/${run.dlqId}`)}>
            DLQ entry
          </a>
          <button data-write type="button" class="primary" title="A new run that keeps the steps that succeeded and runs the failed one again" onClick={() => openStartedRun("Resume", () => resumeRun(run.dlqId!))}>
            Resume
          </button>
          <button data-write type="button" title="A new run from the initial payload" onClick={() => openStartedRun("Restart", () => restartRun(run.dlqId!))}>
            Restart
          </button>
        </>
      )}
    </>
  );
}

/** One run: its settings and ending, each step group in order (parallel branches side by side). */
export function WorkflowRunDetail({ runId }: { runId: string }) {
  const { data: run, error, loading } = usePoll(() => readRun(runId), `run-${runId}`, 1500);
  const [rerunFrom, setRerunFrom] = useState<RerunChoice | null>(null);
  if (error) return <ErrorBox error={error} />;
  if (loading && !run) return <Loading />;
  if (!run) return <ErrorBox error={new Error(`No workflow run ${runId}: unknown id, or it ended longer ago than the plan's log retention.`)} />;
  const ff = run.failureFunction;
  return (
    <>
      <PageHead
        title="Workflow run"
        sub={
          <>
            <Mono>{run.workflowRunId}</Mono> <StateBadge state={run.workflowState} />
          </>
        }
      >
        <RunActions run={run} />
      </PageHead>
      <div class="grid-2">
        <Card title="Run">
          <Fields
            rows={[
              ["URL", <Mono>{run.workflowUrl}</Mono>],
              ["Started", formatTime(run.workflowRunCreatedAt, { millis: true })],
              ["Ended", run.workflowRunCompletedAt ? formatTime(run.workflowRunCompletedAt, { millis: true }) : undefined],
              ["Took", run.workflowRunCompletedAt ? formatDuration(run.workflowRunCompletedAt - run.workflowRunCreatedAt) : undefined],
              ["Labels", labelsOf(run).length > 0 ? <ContextTags e={{ labels: labelsOf(run) }} /> : undefined],
              ["Rerun of", run.rerunOf ? <RerunSource run={run} /> : undefined],
              ["Invoked by", run.invoker ? <a class="mono" href={href(`/workflows/runs/${run.invoker.workflowRunId}`)}>{run.invoker.workflowRunId}</a> : undefined],
              ["DLQ entry", run.dlqId ? <a class="mono" href={href(`/dlq/${run.dlqId}`)}>{run.dlqId}</a> : undefined],
              ["Trace", run.traceId ? <Mono>{run.traceId}</Mono> : undefined],
            ]}
          />
        </Card>
        <Card title="Result">
          {run.workflowRunResponse !== undefined ? (
            <pre class="code wf-out" data-testid="run-result">{showValue(run.workflowRunResponse)}</pre>
          ) : (
            <p class="empty">{run.workflowState === "RUN_STARTED" ? "The run has not returned yet." : "No result."}</p>
          )}
          {ff && (
            <>
              <h3 class="card-sub">Failure function</h3>
              <Fields
                rows={[
                  ["State", ff.state ? <StateBadge state={ff.state} /> : undefined],
                  ["Failed with", ff.failStatus !== undefined ? <StatusCode status={ff.failStatus} /> : undefined],
                  ["Failure", ff.failResponse],
                  ["Its answer", ff.responseStatus !== undefined ? <StatusCode status={ff.responseStatus} /> : undefined],
                  ["Answer body", ff.responseBody ? <Mono>{ff.responseBody}</Mono> : undefined],
                ]}
              />
            </>
          )}
        </Card>
      </div>
      <Card title="Steps">
        <ol class="wf-steps" aria-label="Steps of the run, in order">
          {run.steps.map((g, i) => (
            <Group key={i} g={g} index={i} failedStep={failedStepName(run)} rerun={(fromStep, title, groupIndex) =>
              setRerunFrom({ fromStep, title, groupIndex })} />
          ))}
        </ol>
      </Card>
      {rerunFrom && <RerunDialog key={`${rerunFrom.fromStep}`} run={run} choice={rerunFrom} close={() => setRerunFrom(null)} />}
    </>
  );
}
