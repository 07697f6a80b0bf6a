/**
 * `Svc-Retry-Delay` expressions such as `pow(2, retried) * 1000`. User input is compiled by a
 * hand-written parser into closures, never handed to eval, so it can only do arithmetic.
 */

export class RetryExpressionError extends Error {
  override name = "RetryExpressionError";
}

export const MAX_EXPRESSION_LENGTH = 256;
export const MAX_NESTING = 32;
const MAX_DELAY_MS = 86_400_000;

type Eval = (retried: number) => number;
type Token =
  | { kind: "num"; value: number; pos: number }
  | { kind: "ident"; name: string; pos: number }
  | { kind: "op"; op: string; pos: number }
  | { kind: "end"; pos: number };

/** Arity as [min, max]; min/max take any number of arguments from one up. */
const FUNCTIONS: Readonly<Record<string, { arity: [number, number]; fn: (...args: number[]) => number }>> = {
  pow: { arity: [2, 2], fn: (a = 0, b = 0) => Math.pow(a, b) },
  exp: { arity: [1, 1], fn: (a = 0) => Math.exp(a) },
  sqrt: { arity: [1, 1], fn: (a = 0) => Math.sqrt(a) },
  abs: { arity: [1, 1], fn: (a = 0) => Math.abs(a) },
  floor: { arity: [1, 1], fn: (a = 0) => Math.floor(a) },
  ceil: { arity: [1, 1], fn: (a = 0) => Math.ceil(a) },
  round: { arity: [1, 1], fn: (a = 0) => Math.round(a) },
  min: { arity: [1, Infinity], fn: (...a) => Math.min(...a) },
  max: { arity: [1, Infinity], fn: (...a) => Math.max(...a) },
};

/** Positions in messages are 1-based character columns of the original text. */
function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  const re = /(\d+(?:\.\d*)?|\.\d+)|([A-Za-z_][A-Za-z0-9_]*)|([-+*/%(),])/y;
  let pos = 0;
  while (pos < src.length) {
    const ch = src[pos] ?? "";
    if (/\s/.test(ch)) {
      pos++;
      continue;
    }
    re.lastIndex = pos;
    const m = re.exec(src);
    if (m === null) {
      const hint = ch === "^" ? " (use pow(a, b) for powers)" : "";
      throw new RetryExpressionError(`unexpected character "${ch}" at position ${pos + 1}${hint}`);
    }
    if (m[1] !== undefined) tokens.push({ kind: "num", value: Number(m[1]), pos });
    else if (m[2] !== undefined) tokens.push({ kind: "ident", name: m[2], pos });
    else tokens.push({ kind: "op", op: m[3] ?? "", pos });
    pos = re.lastIndex;
  }
  tokens.push({ kind: "end", pos: src.length });
  return tokens;
}

class Parser {
  private index = 0;
  private depth = 0;
  constructor(private readonly tokens: Token[]) {}

  parse(): Eval {
    const result = this.expression();
    const next = this.peek();
    if (next.kind !== "end") throw this.error(`unexpected ${describe(next)}`, next);
    return result;
  }

  private peek(): Token {
    return this.tokens[this.index] ?? { kind: "end", pos: 0 };
  }

  private isOp(op: string): boolean {
    const t = this.peek();
    return t.kind === "op" && t.op === op;
  }

  private expect(op: string): void {
    const t = this.peek();
    if (!this.isOp(op)) throw this.error(`expected "${op}" but found ${describe(t)}`, t);
    this.index++;
  }

  private error(message: string, at: Token): RetryExpressionError {
    return new RetryExpressionError(`${message} at position ${at.pos + 1}`);
  }

  /** Every construct that can recurse passes through here, so deep input fails cleanly. */
  private nested<T>(at: Token, parse: () => T): T {
    if (++this.depth > MAX_NESTING) throw this.error(`expression nested deeper than ${MAX_NESTING} levels`, at);
    try {
      return parse();
    } finally {
      this.depth--;
    }
  }

  private expression(): Eval {
    let left = this.term();
    while (this.isOp("+") || this.isOp("-")) {
      const minus = this.isOp("-");
      this.index++;
      const l = left;
      const r = this.term();
      left = minus ? (x) => l(x) - r(x) : (x) => l(x) + r(x);
    }
    return left;
  }

  private term(): Eval {
    let left = this.unary();
    while (this.isOp("*") || this.isOp("/") || this.isOp("%")) {
      const t = this.peek();
      const op = t.kind === "op" ? t.op : "";
      this.index++;
      const l = left;
      const r = this.unary();
      if (op === "*") left = (x) => l(x) * r(x);
      else if (op === "/") left = (x) => l(x) / r(x);
      else left = (x) => l(x) % r(x);
    }
    return left;
  }

  private unary(): Eval {
    const t = this.peek();
    if (this.isOp("-") || this.isOp("+")) {
      const minus = this.isOp("-");
      this.index++;
      const operand = this.nested(t, () => this.unary());
      return minus ? (x) => -operand(x) : operand;
    }
    return this.primary();
  }

  private primary(): Eval {
    const t = this.peek();
    if (t.kind === "num") {
      this.index++;
      const value = t.value;
      return () => value;
    }
    if (t.kind === "op" && t.op === "(") {
      this.index++;
      const inner = this.nested(t, () => this.expression());
      this.expect(")");
      return inner;
    }
    if (t.kind === "ident") {
      this.index++;
      if (t.name === "retried") {
        if (this.isOp("(")) throw this.error(`"retried" is a variable, not a function`, t);
        return (x) => x;
      }
      return this.call(t.name, t);
    }
    throw this.error(t.kind === "end" ? "unexpected end of expression" : `unexpected ${describe(t)}`, t);
  }

  private call(name: string, at: Token): Eval {
    const spec = Object.hasOwn(FUNCTIONS, name) ? FUNCTIONS[name] : undefined;
    if (spec === undefined) throw this.error(`unknown identifier "${name}"`, at);
    if (!this.isOp("(")) throw this.error(`function "${name}" must be called with parentheses`, at);
    this.index++;
    const args = this.nested(at, () => {
      const list: Eval[] = [];
      if (!this.isOp(")")) {
        list.push(this.expression());
        while (this.isOp(",")) {
          this.index++;
          list.push(this.expression());
        }
      }
      return list;
    });
    this.expect(")");
    const [min, max] = spec.arity;
    if (args.length < min || args.length > max) {
      const wanted = min === max ? `${min}` : `at least ${min}`;
      throw this.error(`function "${name}" takes ${wanted} argument(s), got ${args.length}`, at);
    }
    const fn = spec.fn;
    return (x) => fn(...args.map((a) => a(x)));
  }
}

function describe(t: Token): string {
  switch (t.kind) {
    case "num":
      return `number ${t.value}`;
    case "ident":
      return `"${t.name}"`;
    case "op":
      return `"${t.op}"`;
    case "end":
      return "end of expression";
  }
}

/**
 * Compiles once at publish time (so a bad expression is a 400 there), and returns the delay in
 * whole milliseconds for a given `retried`, clamped to [0, 1 day]; NaN counts as 0.
 */
export function compileRetryExpression(src: string): (retried: number) => number {
  if (src.length > MAX_EXPRESSION_LENGTH) {
    throw new RetryExpressionError(`expression is longer than ${MAX_EXPRESSION_LENGTH} characters`);
  }
  if (src.trim() === "") throw new RetryExpressionError("empty expression");
  const evaluate = new Parser(tokenize(src)).parse();
  return (retried) => {
    const v = evaluate(retried);
    if (Number.isNaN(v) || v <= 0) return 0;
    return v >= MAX_DELAY_MS ? MAX_DELAY_MS : Math.round(v);
  };
}
