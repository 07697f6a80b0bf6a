type Param = string | number;

/**
 * Builds the WHERE clause of a filtered listing from optional conditions: a condition whose
 * value is undefined is left out, so the caller lists every filter once, in one place.
 */
export class Where {
  private readonly clauses: string[] = [];
  readonly params: Record<string, Param> = {};
  private n = 0;

  constructor(column: string, value: Param) {
    this.add(column, "=", value);
  }

  add(column: string, op: "=" | "<" | ">" | ">=" | "<=", value: Param | undefined): this {
    if (value === undefined) return this;
    this.clauses.push(`${column} ${op} ${this.bind(value)}`);
    return this;
  }

  in(column: string, values: readonly Param[] | undefined): this {
    if (!values?.length) return this;
    const keys = values.map((value) => this.bind(value));
    this.clauses.push(`${column} IN (${keys.join(", ")})`);
    return this;
  }

  /** Binds `value` and returns its placeholder, for a clause the caller builds (see `raw`). */
  bind(value: Param): string {
    const key = `p${this.n++}`;
    this.params[key] = value;
    return `$${key}`;
  }

  /** A condition built by the caller, with placeholders from `bind`. */
  raw(clause: string): this {
    this.clauses.push(clause);
    return this;
  }

  /** `SELECT columns FROM table WHERE ... ORDER BY order LIMIT limit`. */
  select(table: string, order: string, limit: number, columns = "*"): { sql: string; params: Record<string, Param> } {
    const key = `p${this.n++}`;
    this.params[key] = limit;
    return { sql: `SELECT ${columns} FROM ${table} WHERE ${this.clauses.join(" AND ")} ORDER BY ${order} LIMIT $${key}`, params: this.params };
  }
}
