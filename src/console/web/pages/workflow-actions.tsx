import { href, navigate } from "../router.ts";
import { act } from "../ui/toast.tsx";
import { cancelRuns } from "../workflows-api.ts";

/** The two lists of the Workflows page. */
export function WorkflowTabs({ current }: { current: "runs" | "dlq" }) {
  return (
    <nav class="tabs" aria-label="Workflow views">
      <a href={href("/workflows")} aria-current={current === "runs" ? "page" : undefined}>
        Runs
      </a>
      <a href={href("/workflows/dlq")} aria-current={current === "dlq" ? "page" : undefined}>
        Failed runs (DLQ)
      </a>
    </nav>
  );
}

export const cancelRun = (runId: string) =>
  confirm(`Cancel workflow run ${runId}? Its pending steps are canceled.`) &&
  act("Cancel run", () => cancelRuns([runId]), (a) => (a.cancelled ? `Canceled ${runId}` : `${runId} had already ended`));

/** Resume or restart made a new run: say so and open it. */
export async function openStartedRun(label: string, run: () => Promise<{ workflowRunId: string }>): Promise<void> {
  const answer = await act(label, run, (a) => `${label}: new run ${a.workflowRunId}`);
  if (answer) navigate(href(`/workflows/runs/${answer.workflowRunId}`));
}
