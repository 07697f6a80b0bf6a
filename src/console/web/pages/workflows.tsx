import { useState } from "preact/hooks";
import { formatDuration, formatTime, relative } from "../format.ts";
import { usePoll } from "../live.ts";
import { labelsOf } from "../logs.ts";
import { href, type Route } from "../router.ts";
import { useStatus } from "../status.ts";
import { Badge, Empty, ErrorBox, Loading, PageHead, StateBadge } from "../ui/bits.tsx";
import { apiFilters, FilterBar, type FilterField } from "../ui/filters.tsx";
import { Pager } from "../ui/pager.tsx";
import { ContextTags, LinkRow } from "../ui/rows.tsx";
import { completedSteps, pendingSteps, readRuns, RUN_STATES, type WorkflowRun } from "../workflows-api.ts";
import { cancelRun, WorkflowTabs } from "./workflow-actions.tsx";
import { WorkflowDlq } from "./workflow-dlq.tsx";
import { WorkflowRunDetail } from "./workflow-run.tsx";

const RUN_FILTERS: FilterField[] = [
  { key: "state", label: "State", kind: "select", options: RUN_STATES },
  { key: "workflowRunId", label: "Run id", placeholder: "wfr_…" },
  { key: "workflowUrl", label: "URL", placeholder: "https://…/workflow" },
  { key: "label", label: "Label" },
  { key: "fromDate", label: "From", kind: "datetime" },
  { key: "toDate", label: "To", kind: "datetime" },
];

const PAGE_SIZE = 50;

/** `/workflows` lists runs, `/workflows/runs/{id}` shows one, `/workflows/dlq` the failed runs' DLQ. */
export function WorkflowsPage({ route }: { route: Route }) {
  const [, , section, id] = route.path.split("/");
  if (section === "runs" && id) return <WorkflowRunDetail runId={decodeURIComponent(id)} />;
  if (section === "dlq") return <WorkflowDlq route={route} />;
  return <RunList route={route} />;
}

/** What a run has done: completed steps and what is still under way. */
function StepSummary({ run }: { run: WorkflowRun }) {
  const next = pendingSteps(run);
  const failed = next.filter((s) => s.state === "STEP_FAILED").length;
  const retrying = next.filter((s) => s.state === "STEP_RETRY").length;
  const waiting = next.filter((s) => s.state === "STEP_PROGRESS").length;
  return (
    <span class="step-summary">
      <span title="completed steps">{completedSteps(run)}</span>
      {waiting > 0 && <Badge tone="info">{waiting} running</Badge>}
      {retrying > 0 && <Badge tone="warn">{retrying} retrying</Badge>}
      {failed > 0 && <Badge tone="bad">{failed} failed</Badge>}
    </span>
  );
}

function RunList({ route }: { route: Route }) {
  const query = apiFilters(RUN_FILTERS, route.query);
  const key = JSON.stringify(query);
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const list = usePoll(() => readRuns({ ...query, count: PAGE_SIZE, cursor }), `${key}|${cursor ?? ""}`);
  const now = useStatus().data?.clock.now ?? Date.now();
  const runs = list.data?.runs ?? [];
  const filtered = Object.keys(query).length > 0;

  return (
    <>
      <PageHead title="Workflows" sub="Runs of durable functions served with the workflow SDK, newest first; open one for its steps." />
      <WorkflowTabs current="runs" />
      <FilterBar fields={RUN_FILTERS} path="/workflows" />
      {list.error && <ErrorBox error={list.error} />}
      {list.loading && !list.data && <Loading />}
      {list.data && runs.length === 0 && (
        <Empty>{filtered ? "No run matches." : "No workflow runs yet. A trigger from the workflow SDK (client.trigger) or POST /v2/trigger/{url} starts one."}</Empty>
      )}
      {runs.length > 0 && (
        <div class="table-wrap">
          <table class="table" aria-label="Workflow runs">
            <thead>
              <tr>
                <th>Started</th>
                <th>State</th>
                <th>Run</th>
                <th>URL</th>
                <th class="num">Steps</th>
                <th class="hide-narrow">Took</th>
                <th class="hide-narrow">Labels</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {runs.map((r) => (
                <LinkRow key={r.workflowRunId} to={href(`/workflows/runs/${r.workflowRunId}`)}>
                  <td class="nowrap" title={formatTime(r.workflowRunCreatedAt, { millis: true })}>
                    {formatTime(r.workflowRunCreatedAt)}
                    <div class="muted small">{relative(r.workflowRunCreatedAt, now)}</div>
                  </td>
                  <td>
                    <StateBadge state={r.workflowState} />
                  </td>
                  <td>
                    <a class="mono id" href={href(`/workflows/runs/${r.workflowRunId}`)} title={r.workflowRunId}>
                      {r.workflowRunId}
                    </a>
                  </td>
                  <td class="mono ellipsis" title={r.workflowUrl}>
                    {r.workflowUrl}
                  </td>
                  <td class="num" data-label="steps">
                    <StepSummary run={r} />
                  </td>
                  <td class="hide-narrow nowrap">
                    {r.workflowRunCompletedAt ? formatDuration(r.workflowRunCompletedAt - r.workflowRunCreatedAt) : <span class="muted">running</span>}
                  </td>
                  <td class="hide-narrow">
                    <ContextTags e={{ labels: labelsOf(r) }} />
                  </td>
                  <td class="row-actions">
                    {r.workflowState === "RUN_STARTED" && (
                      <button data-write type="button" class="small danger" aria-label={`Cancel ${r.workflowRunId}`} onClick={() => cancelRun(r.workflowRunId)}>
                        Cancel
                      </button>
                    )}
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
