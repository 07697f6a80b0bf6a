/** A value an engine answers at once (SQLite) or later (PostgreSQL, outside its writes). */
export type Maybe<T> = T | Promise<T>;

/** Applies `fn` to a value that may arrive later: at once when it is there already. */
export function andThen<T, U>(value: Maybe<T>, fn: (v: T) => Maybe<U>): Maybe<U> {
  return value instanceof Promise ? value.then(fn) : fn(value);
}
