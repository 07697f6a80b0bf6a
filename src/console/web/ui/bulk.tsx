import { act } from "./toast.tsx";

/** One action on every entry a list's filters match. */
export interface MatchingAction {
  verb: string;
  /** Acts on them all; resolves to how many it acted on. */
  run: () => Promise<number>;
  /** The notice, from that number: "Deleted 3 entries". */
  done: (n: number) => string;
  danger?: boolean;
  /** Said after the question, e.g. that it cannot be undone. */
  warning?: string;
}

/**
 * Buttons for a page head that act on every entry the list's filters match (every entry without
 * filters), not only the page shown; each asks first, naming which. `after` runs once one did.
 */
export function AllMatching({ actions, filtered, what, disabled, after }: {
  actions: MatchingAction[];
  filtered: boolean;
  /** Which entries, as the question names them: with filters, and without. */
  what: { matching: string; all: string };
  disabled: boolean;
  after?: () => void;
}) {
  return (
    <>
      {actions.map((a) => (
        <button data-write
          key={a.verb}
          type="button"
          class={a.danger ? "danger" : undefined}
          disabled={disabled}
          onClick={async () => {
            if (!confirm(`${a.verb} ${filtered ? what.matching : what.all}?${a.warning ? ` ${a.warning}` : ""}`)) return;
            if ((await act(a.verb, a.run, a.done)) !== undefined) after?.();
          }}
        >
          {a.verb} all{filtered ? " matching" : ""}
        </button>
      ))}
    </>
  );
}
