import { useEffect, useState } from "preact/hooks";
import type { Query } from "../api.ts";
import { fromLocalInput } from "../format.ts";
import { href, navigate, useRoute } from "../router.ts";

export interface FilterField {
  /** Query key in the console's URL and in the API call (dates are converted). */
  key: string;
  label: string;
  kind?: "text" | "select" | "datetime";
  options?: string[];
  placeholder?: string;
}

/** The filters of a list, as the API expects them: several values comma-separated, dates in ms. */
export function apiFilters(fields: FilterField[], params: URLSearchParams): Query {
  const query: Query = {};
  for (const field of fields) {
    const value = params.get(field.key)?.trim();
    if (!value) continue;
    query[field.key] = field.kind === "datetime" ? fromLocalInput(value) : value;
  }
  return query;
}

/**
 * A filter bar bound to the page's URL: applying it changes the address (so a filtered view can
 * be bookmarked or shared) and the list re-reads. Several values: comma-separated.
 */
export function FilterBar({ fields, path, shown = 5 }: { fields: FilterField[]; path: string; shown?: number }) {
  const route = useRoute();
  const [more, setMore] = useState(false);
  const fromUrl = () => Object.fromEntries(fields.map((f) => [f.key, route.query.get(f.key) ?? ""]));
  const [values, setValues] = useState<Record<string, string>>(fromUrl);
  useEffect(() => setValues(fromUrl()), [route.query.toString()]);
  const active = fields.filter((f) => route.query.get(f.key)).length;

  const apply = (next: Record<string, string>) => navigate(href(path, next));
  return (
    <form
      class="filters"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        apply(values);
      }}
    >
      {fields.filter((f, i) => more || i < shown || route.query.get(f.key)).map((f) => (
        <label key={f.key} class={`field ${f.kind ?? "text"}`}>
          <span>{f.label}</span>
          {f.kind === "select" ? (
            <select value={values[f.key]} onChange={(e) => apply({ ...values, [f.key]: e.currentTarget.value })}>
              <option value="">any</option>
              {f.options?.map((o) => (
                <option key={o} value={o}>
                  {o}
                </option>
              ))}
            </select>
          ) : f.kind === "datetime" ? (
            <input type="datetime-local" name={f.key} value={values[f.key]} onInput={(e) => setValues({ ...values, [f.key]: e.currentTarget.value })} />
          ) : (
            <input
              type="text"
              name={f.key}
              value={values[f.key]}
              placeholder={f.placeholder}
              spellcheck={false}
              autocomplete="off"
              onInput={(e) => setValues({ ...values, [f.key]: e.currentTarget.value })}
            />
          )}
        </label>
      ))}
      <div class="filter-actions">
        <button type="submit" class="primary">
          Filter
        </button>
        {fields.length > shown && (
          <button type="button" class="link" aria-expanded={more} onClick={() => setMore(!more)}>
            {more ? "Fewer filters" : `More filters (${fields.length - shown})`}
          </button>
        )}
        {active > 0 && (
          <button type="button" onClick={() => apply({})}>
            Clear {active}
          </button>
        )}
      </div>
    </form>
  );
}
