import { useState } from "preact/hooks";
import { failedAt } from "../dlq-api.ts";
import { formatTime, plural, relative } from "../format.ts";
import { usePoll } from "../live.ts";
import { href, type Route } from "../router.ts";
import { useStatus } from "../status.ts";
import { AllMatching } from "../ui/bulk.tsx";
import { Empty, ErrorBox, Loading, PageHead, StateBadge, StatusCode } from "../ui/bits.tsx";
import { apiFilters, FilterBar, type FilterField } from "../ui/filters.tsx";
import { Pager, useSelection } from "../ui/pager.tsx";
import { act } from "../ui/toast.tsx";
import {
  deleteWorkflowDlq,
  deleteWorkflowDlqMatching,
  readWorkflowDlq,
  restartRun,
  resumeRun,
  retryFailureFunction,
  startRuns,
  startRunsMatching,
  type WorkflowDlqEntry,
} from "../workflows-api.ts";
import { openStartedRun, WorkflowTabs } from "./workflow-actions.tsx";

const WORKFLOW_DLQ_FILTERS: FilterField[] = [
  { key: "workflowRunId", label: "Run id", placeholder: "wfr_…" },
  { key: "workflowUrl", label: "URL", placeholder: "https://…/workflow" },
  { key: "failureFunctionState", label: "Failure function", kind: "select", options: ["CALLBACK_INPROGRESS", "CALLBACK_SUCCESS", "CALLBACK_FAIL", "CALLBACK_CANCELED"] },
  { key: "label", label: "Label" },
  { key: "fromDate", label: "From", kind: "datetime" },
  { key: "toDate", label: "To", kind: "datetime" },
];

/** The failure function's state; one that failed can be called again (the server refuses any other). */
function FailureFunction({ e }: { e: WorkflowDlqEntry }) {
  const state = e.failureCallbackInfo?.state;
  if (!state) return <span class="muted">{e.failureCallback ? "—" : "none"}</span>;
  return (
    <span class="cell-line">
      <StateBadge state={state} />
      {state === "CALLBACK_FAIL" && (
        <button data-write type="button" class="small" title="Call the run's failure function again" onClick={() => act("Failure function", () => retryFailureFunction(e.dlqId), () => `Failure function of ${e.workflowRunId} called again`)}>
          Call again
        </button>
      )}
    </span>
  );
}

function Actions({ e }: { e: WorkflowDlqEntry }) {
  return (
    <>
      <button data-write type="button" class="small primary" title="A new run that keeps the steps that succeeded and runs the failed one again" onClick={() => openStartedRun("Resume", () => resumeRun(e.dlqId))}>
        Resume
      </button>
      <button data-write type="button" class="small" title="A new run from the initial payload" onClick={() => openStartedRun("Restart", () => restartRun(e.dlqId))}>
        Restart
      </button>
      <button data-write
        type="button"
        class="small danger"
        aria-label={`Delete ${e.dlqId}`}
        onClick={() => confirm(`Delete the DLQ entry of run ${e.workflowRunId}?`) && act("Delete", () => deleteWorkflowDlq([e.dlqId]), () => `Deleted ${e.dlqId}`)}
      >
        Delete
      </button>
    </>
  );
}

/** The DLQ of failed workflow runs: resume, restart, call the failure function again, delete. */
export function WorkflowDlq({ route }: { route: Route }) {
  const query = apiFilters(WORKFLOW_DLQ_FILTERS, route.query);
  const key = JSON.stringify(query);
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const list = usePoll(() => readWorkflowDlq({ ...query, count: 50, cursor }), `wf-dlq|${key}|${cursor ?? ""}`);
  const now = useStatus().data?.clock.now ?? Date.now();
  const entries = list.data?.messages ?? [];
  const filtered = Object.keys(query).length > 0;
  const selection = useSelection(entries.map((e) => e.dlqId), key);
  const chosen = selection.chosen;
  const bulk = async <T,>(label: string, run: () => Promise<T>, describe: (answer: T) => string) => {
    if (await act(label, run, describe)) selection.clear();
  };

  return (
    <>
      <PageHead title="Workflows" sub="Runs whose step ran out of retries. Resume keeps the steps that succeeded; restart starts over from the initial payload.">
        <AllMatching
          filtered={filtered}
          disabled={entries.length === 0}
          what={{ matching: "every failed run matching the filters", all: "EVERY failed run of the workflow DLQ" }}
          after={() => {
            selection.clear();
            setCursor(undefined);
          }}
          actions={[
            { verb: "Resume", run: () => startRunsMatching("resume", query), done: (n) => `Resumed ${plural(n, "run", "runs")}` },
            { verb: "Restart", run: () => startRunsMatching("restart", query), done: (n) => `Restarted ${plural(n, "run", "runs")}` },
            { verb: "Delete", danger: true, warning: "This cannot be undone.", run: () => deleteWorkflowDlqMatching(query), done: (n) => `Deleted ${plural(n, "entry", "entries")}` },
          ]}
        />
      </PageHead>
      <WorkflowTabs current="dlq" />
      <FilterBar fields={WORKFLOW_DLQ_FILTERS} path="/workflows/dlq" />
      {chosen.length > 0 && (
        <div class="selection-bar" role="region" aria-label="Selected entries">
          <span>{chosen.length} selected</span>
          <button
            type="button"
            class="primary"
            onClick={() => bulk("Resume", () => startRuns("resume", chosen), (a) => `Resumed ${plural(a.workflowRuns.length, "run", "runs")}`)}
          >
            Resume selected
          </button>
          <button
            type="button"
            onClick={() => bulk("Restart", () => startRuns("restart", chosen), (a) => `Restarted ${plural(a.workflowRuns.length, "run", "runs")}`)}
          >
            Restart selected
          </button>
          <button
            type="button"
            class="danger"
            onClick={() => confirm(`Delete ${plural(chosen.length, "entry", "entries")}?`) && bulk("Delete", () => deleteWorkflowDlq(chosen), (a) => `Deleted ${plural(a.deleted, "entry", "entries")}`)}
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
      {list.data && entries.length === 0 && <Empty>{filtered ? "No failed run matches." : "No failed workflow run waits in the DLQ."}</Empty>}
      {entries.length > 0 && (
        <div class="table-wrap">
          <table class="table" aria-label="Failed workflow runs">
            <thead>
              <tr>
                <th class="check">
                  <input type="checkbox" aria-label="Select all shown" checked={selection.all} onChange={selection.toggleAll} />
                </th>
                <th>Failed</th>
                <th>Run</th>
                <th>Answer</th>
                <th class="hide-narrow">Failure function</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {entries.map((e) => (
                <tr key={e.dlqId} data-row tabIndex={0} data-dlq={e.dlqId} class={selection.has(e.dlqId) ? "selected" : ""}>
                  <td class="check">
                    <input type="checkbox" aria-label={`Select ${e.dlqId}`} checked={selection.has(e.dlqId)} onChange={() => selection.toggle(e.dlqId)} />
                  </td>
                  <td class="nowrap">
                    <a href={href(`/dlq/${e.dlqId}`)} title="The DLQ entry: request and last answer">
                      {formatTime(failedAt(e))}
                    </a>
                    <div class="muted small">{relative(failedAt(e), now)}</div>
                  </td>
                  <td>
                    <a class="mono id" href={href(`/workflows/runs/${e.workflowRunId}`)} title={e.workflowRunId}>
                      {e.workflowRunId}
                    </a>
                    <div class="muted small mono ellipsis" title={e.workflowUrl}>
                      {e.workflowUrl}
                    </div>
                  </td>
                  <td>
                    <StatusCode status={e.responseStatus} />
                  </td>
                  <td>
                    <FailureFunction e={e} />
                  </td>
                  <td class="row-actions">
                    <Actions e={e} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager cursor={cursor} next={list.data?.cursor} go={setCursor} />
    </>
  );
}
