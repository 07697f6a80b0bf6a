/**
 * JSON `null` in a request body means "not set": the official Python client sends
 * `"queue": null` and `"body": null` in batch elements. Fields whose value is null are removed, at
 * every depth, before the body is validated; nulls inside arrays stay (they are values).
 */
export function dropNullFields<T>(value: T): T {
  if (Array.isArray(value)) {
    for (const item of value) dropNullFields(item);
  } else if (isPlainObject(value)) {
    for (const [key, field] of Object.entries(value)) {
      if (field === null) delete value[key];
      else dropNullFields(field);
    }
  }
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
