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

  add(column: string, op: "=" | "<" | ">=" | "<=", value: Param | undefined): this {
    if (value === undefined) return this;
    const key = `p${this.n++}`;
    this.clauses.push(`${column} ${op} $${key}`);
    this.params[key] = value;
    return this;
  }

  in(column: string, values: readonly Param[] | undefined): this {
    if (!values?.length) return this;
    const keys = values.map((value) => {
      const key = `p${this.n++}`;
      this.params[key] = value;
      return `$${key}`;
    });
    this.clauses.push(`${column} IN (${keys.join(", ")})`);
    return this;
  }

  /** A comma-joined labels column (`a,b`) holding any of `labels`. */
  anyLabel(column: string, labels: readonly string[] | undefined): this {
    if (!labels?.length) return this;
    const tests = labels.map((label) => {
      const key = `p${this.n++}`;
      this.params[key] = `,${label},`;
      return `instr(',' || ${column} || ',', $${key}) > 0`;
    });
    this.clauses.push(`(${tests.join(" OR ")})`);
    return this;
  }

  /** `SELECT * FROM table WHERE ... ORDER BY order LIMIT limit`. */
  select(table: string, order: string, limit: number): { sql: string; params: Record<string, Param> } {
    const key = `p${this.n++}`;
    this.params[key] = limit;
    return { sql: `SELECT * FROM ${table} WHERE ${this.clauses.join(" AND ")} ORDER BY ${order} LIMIT $${key}`, params: this.params };
  }
}
