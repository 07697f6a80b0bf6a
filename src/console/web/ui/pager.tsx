import { useEffect, useState } from "preact/hooks";

/** Newest / older pages of a list the API answers with a cursor. */
export function Pager({ cursor, next, go }: { cursor: string | undefined; next: string | undefined; go: (cursor: string | undefined) => void }) {
  return (
    <p class="more">
      {cursor && (
        <button type="button" onClick={() => go(undefined)}>
          ← Newest
        </button>
      )}
      {next && (
        <button type="button" onClick={() => go(next)}>
          Older →
        </button>
      )}
    </p>
  );
}

/** The checked rows of a list, by id; cleared when `key` (the filters) changes. */
export function useSelection(ids: string[], key: string) {
  const [selected, setSelected] = useState<Set<string>>(new Set());
  useEffect(() => setSelected(new Set()), [key]);
  const all = ids.length > 0 && ids.every((id) => selected.has(id));
  return {
    has: (id: string) => selected.has(id),
    /** The shown rows that are checked. */
    chosen: ids.filter((id) => selected.has(id)),
    all,
    toggle(id: string) {
      const next = new Set(selected);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      setSelected(next);
    },
    toggleAll: () => setSelected(all ? new Set() : new Set(ids)),
    clear: () => setSelected(new Set()),
  };
}
