import { badRequest } from "../core/errors.ts";
import { isValidHeaderValue } from "../util/canonical-header.ts";

const MAX_LABELS_LENGTH = 256;

/**
 * `Svc-Label: a, b` → `["a", "b"]`: comma-separated, trimmed, empty pieces dropped, order kept.
 * Undefined when no label is left.
 */
export function parseLabels(raw: string, headerName: string): string[] | undefined {
  if (raw.length > MAX_LABELS_LENGTH || !isValidHeaderValue(raw))
    throw badRequest(`invalid ${headerName}: at most ${MAX_LABELS_LENGTH} printable characters`);
  const labels = raw.split(",").map((l) => l.trim()).filter(Boolean);
  return labels.length > 0 ? labels : undefined;
}

/**
 * Labels are stored as one comma-joined column (`a,b`): a label never contains a comma, so the
 * label filter can match one label inside it (see src/filters/where.ts).
 */
export const joinLabels = (labels: string[] | undefined): string | null => (labels?.length ? labels.join(",") : null);

export function splitLabels(stored: string | null | undefined): string[] | undefined {
  if (!stored) return undefined;
  const labels = stored.split(",").map((l) => l.trim()).filter(Boolean);
  return labels.length > 0 ? labels : undefined;
}

/** `label` (the first one, for older clients) and `labels` (all, in order), as messages, logs and the DLQ show them. */
export function labelFields(labels: string[] | undefined): { label?: string; labels?: string[] } {
  return labels?.length ? { label: labels[0], labels } : {};
}
