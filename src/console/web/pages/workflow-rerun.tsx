import { useState } from "preact/hooks";
import { href } from "../router.ts";
import { configHeader, useStatus } from "../status.ts";
import { Field } from "../ui/options.tsx";
import { rerunRun, type StepLog, type WorkflowRun } from "../workflows-api.ts";
import { openStartedRun } from "./workflow-actions.tsx";

/** A step to rerun from: how the request names it, how the page does, and the first step group it runs again. */
export interface RerunChoice {
  fromStep: string | number;
  title: string;
  groupIndex: number;
}

/** Steps that give the code no result to change (a sleep, a webhook: rerun from it instead). */
const NO_RESULT = ["Initial", "SleepFor", "SleepUntil", "CreateWebhook", "WaitForWebhook"];

const parsed = (value: unknown): unknown => {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
};

/** What a kept step gave the workflow's code, as the rerun's `results` takes it; undefined when it gives none. */
function resultOf(s: StepLog): unknown {
  if (NO_RESULT.includes(s.stepType ?? "") || s.state !== "STEP_SUCCESS") return undefined;
  if (s.stepType === "Call")
    return { status: s.callResponseStatus, body: parsed(s.callResponseBody), header: s.callResponseHeaders ?? {} };
  const out = parsed(s.out);
  if (s.stepType === "Invoke" && out && typeof out === "object")
    return { ...out, body: parsed((out as { body?: unknown }).body) };
  return out ?? null;
}

/** The steps a rerun keeps: every step of the groups before the one it runs again (a parallel group whole). */
const keptSteps = (run: WorkflowRun, groupIndex: number) =>
  run.steps
    .slice(0, groupIndex)
    .filter((g) => g.type !== "next")
    .flatMap((g) => g.steps)
    .filter((s) => s.stepType !== "Initial");

/**
 * "Rerun from here": what the new run keeps, the kept steps' results to change (as JSON), its
 * label; then the new run opens.
 */
export function RerunDialog({ run, choice, close }: { run: WorkflowRun; choice: RerunChoice; close: () => void }) {
  const status = useStatus().data;
  // As the run was when the dialog opened (the page goes on polling a run under way).
  const [kept] = useState(() => keptSteps(run, choice.groupIndex));
  // A name the log shows twice gets one result (the rerun gives it to each step of that name).
  const editable = kept.filter(
    (s, i) => s.stepName && resultOf(s) !== undefined && kept.findIndex((k) => k.stepName === s.stepName) === i,
  );
  const [initial] = useState(() =>
    Object.fromEntries(editable.map((s) => [s.stepName!, JSON.stringify(resultOf(s), null, 2)])),
  );
  const edit = (name: string, text: string) => setTexts({ ...texts, [name]: text });
  const [texts, setTexts] = useState(initial);
  const [label, setLabel] = useState("");
  const [problem, setProblem] = useState<string>();

  const submit = async (e: Event) => {
    e.preventDefault();
    const results: Record<string, unknown> = {};
    for (const [name, text] of Object.entries(texts)) {
      if (text.trim() === initial[name]!.trim()) continue;
      try {
        results[name] = JSON.parse(text);
      } catch {
        return setProblem(`The result of ${name} is not JSON (a text goes in double quotes).`);
      }
    }
    const headers = label.trim() ? { [configHeader(status, "Label")]: label.trim() } : undefined;
    const body = { fromStep: choice.fromStep, ...(Object.keys(results).length > 0 ? { results } : {}) };
    close();
    await openStartedRun("Rerun", () => rerunRun(run.workflowRunId, body, headers));
  };

  return (
    <div class="overlay" onClick={close}>
      <div
        class="card dialog rerun-dialog"
        role="dialog"
        aria-modal="true"
        aria-label={`Rerun from ${choice.title}`}
        onClick={(e) => e.stopPropagation()}
      >
        <form class="rerun-form" onSubmit={submit}>
          <h2>Rerun from {choice.title}</h2>
          <p class="muted small">
            A new run keeps {kept.length === 1 ? "the step" : `the ${kept.length} steps`} before it as completed (their side
            effects do not happen again), then runs {choice.title} and what follows with your endpoint's code as it is now.
            This run stays as it is.
          </p>
          {editable.length > 0 && (
            <h3 class="card-sub">Results of the kept steps: change one to try another input (JSON)</h3>
          )}
          {editable.map((s) => (
            <Field key={s.stepName} label={s.stepName!} hint={s.stepType} wide>
              <textarea
                rows={Math.min(8, texts[s.stepName!]!.split("\n").length + 1)}
                spellcheck={false}
                value={texts[s.stepName!]}
                onInput={(e) => edit(s.stepName!, e.currentTarget.value)}
              />
            </Field>
          ))}
          <Field label="Label" hint="the new run's label (default: this run's)" wide>
            <input value={label} spellcheck={false} onInput={(e) => setLabel(e.currentTarget.value)} />
          </Field>
          {problem && (
            <p class="error-box" role="alert">
              {problem}
            </p>
          )}
          <div class="form-actions">
            <button type="submit" class="primary">
              Rerun
            </button>
            <button type="button" onClick={close}>
              Cancel
            </button>
          </div>
        </form>
      </div>
    </div>
  );
}

/** Where a rerun came from, for its page: the source run and the step. */
export function RerunSource({ run }: { run: WorkflowRun }) {
  const source = run.rerunOf;
  if (!source) return null;
  const step = source.stepName ?? `step ${source.stepId}`;
  return (
    <span data-testid="rerun-of">
      <a class="mono" href={href(`/workflows/runs/${source.workflowRunId}`)}>
        {source.workflowRunId}
      </a>{" "}
      from <b>{step}</b>
    </span>
  );
}
