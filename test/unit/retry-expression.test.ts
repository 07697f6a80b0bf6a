import { describe, expect, test } from "bun:test";
import { compileRetryExpression, RetryExpressionError } from "../../src/util/retry-expression.ts";

const run = (src: string, retried = 0) => compileRetryExpression(src)(retried);

describe("evaluation", () => {
  test("the documented example", () => {
    const f = compileRetryExpression("pow(2, retried) * 1000");
    expect([0, 1, 2, 3].map(f)).toEqual([1000, 2000, 4000, 8000]);
  });

  test("precedence and associativity", () => {
    expect(run("1 + 2 * 3")).toBe(7);
    expect(run("(1 + 2) * 3")).toBe(9);
    expect(run("10 - 4 - 3")).toBe(3);
    expect(run("100 / 10 / 2")).toBe(5);
    expect(run("17 % 5 * 2")).toBe(4);
    expect(run("2 * 3 % 4")).toBe(2);
  });

  test("unary minus and plus", () => {
    expect(run("-(-5)")).toBe(5);
    expect(run("10 - -3")).toBe(13);
    expect(run("+7")).toBe(7);
    expect(run("-2 * -3")).toBe(6);
  });

  test("decimals", () => {
    expect(run("1.5 * 1000")).toBe(1500);
    expect(run(".25 * 100")).toBe(25);
    expect(run("2. * 3")).toBe(6);
  });

  test("every function", () => {
    expect(run("pow(3, 2)")).toBe(9);
    expect(run("exp(1) * 1000")).toBe(Math.round(Math.E * 1000));
    expect(run("sqrt(16)")).toBe(4);
    expect(run("abs(0 - 12)")).toBe(12);
    expect(run("floor(2.9) * 10")).toBe(20);
    expect(run("ceil(2.1) * 10")).toBe(30);
    expect(run("round(2.5) * 10")).toBe(30);
    expect(run("min(5, 3, 9)")).toBe(3);
    expect(run("max(5, 3, 9)")).toBe(9);
    expect(run("min(7)")).toBe(7);
  });

  test("uses retried and composes functions", () => {
    const f = compileRetryExpression("min(60000, 1000 * pow(2, retried)) + retried");
    expect(f(0)).toBe(1000);
    expect(f(4)).toBe(16004);
    expect(f(10)).toBe(60010);
  });

  test("whitespace is free-form", () => {
    expect(run(" pow ( 2 ,retried )*1000 ", 1)).toBe(2000);
    expect(run("1\t+\n1")).toBe(2);
  });
});

describe("result clamping", () => {
  test("rounds to whole milliseconds", () => {
    expect(run("1.4")).toBe(1);
    expect(run("1.6")).toBe(2);
  });

  test("negative → 0", () => {
    expect(run("0 - 5000")).toBe(0);
  });

  test("above one day → one day", () => {
    expect(run("86400001")).toBe(86_400_000);
    expect(run("pow(10, retried)", 20)).toBe(86_400_000);
  });

  test("Infinity → one day, -Infinity → 0, NaN → 0", () => {
    expect(run("1 / 0")).toBe(86_400_000);
    expect(run("-1 / 0")).toBe(0);
    expect(run("0 / 0")).toBe(0);
    expect(run("sqrt(-1)")).toBe(0);
  });
});

describe("rejection", () => {
  test.each([
    ["", /empty expression/],
    ["   ", /empty expression/],
    ["2 ^ 3", /"\^" at position 3.*pow/],
    ["foo", /unknown identifier "foo" at position 1/],
    ["1 + bar(2)", /unknown identifier "bar" at position 5/],
    ["constructor(1)", /unknown identifier "constructor"/],
    ["toString(1)", /unknown identifier "toString"/],
    ["Retried", /unknown identifier "Retried"/],
    ["pow(2)", /"pow" takes 2 argument\(s\), got 1/],
    ["pow(1, 2, 3)", /"pow" takes 2 argument\(s\), got 3/],
    ["sqrt()", /"sqrt" takes 1 argument\(s\), got 0/],
    ["min()", /"min" takes at least 1/],
    ["max", /"max" must be called with parentheses/],
    ["retried(1)", /"retried" is a variable/],
    ["1 2", /unexpected number 2 at position 3/],
    ["1 +", /unexpected end of expression/],
    ["(1 + 2", /expected "\)" but found end of expression/],
    ["1 + 2)", /unexpected "\)" at position 6/],
    ["pow(2,,3)", /unexpected ","/],
    ["1.2.3", /unexpected number 0.3/],
    ["1e3", /unexpected "e3"/],
    ["1; 2", /unexpected character ";" at position 2/],
    ["Math.pow(2,3)", /unexpected character "\." at position 5/],
    ["Math", /unknown identifier "Math"/],
    ["'1'", /unexpected character "'"/],
  ])("%p", (src, message) => {
    expect(() => compileRetryExpression(src)).toThrow(RetryExpressionError);
    expect(() => compileRetryExpression(src)).toThrow(message);
  });

  test("length limit is 256 characters", () => {
    const ok = "1" + " ".repeat(255);
    expect(ok.length).toBe(256);
    expect(compileRetryExpression(ok)(0)).toBe(1);
    expect(() => compileRetryExpression(ok + " ")).toThrow(/longer than 256/);
  });

  test("nesting limit is 32", () => {
    const parens = (n: number) => "(".repeat(n) + "1" + ")".repeat(n);
    expect(run(parens(32))).toBe(1);
    expect(() => compileRetryExpression(parens(33))).toThrow(/nested deeper than 32/);
    expect(() => compileRetryExpression("-".repeat(40) + "1")).toThrow(/nested deeper than 32/);
    const calls = (n: number) => "abs(".repeat(n) + "1" + ")".repeat(n);
    expect(run(calls(32))).toBe(1);
    expect(() => compileRetryExpression(calls(33))).toThrow(/nested deeper than 32/);
  });
});
