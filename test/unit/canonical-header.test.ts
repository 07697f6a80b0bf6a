import { describe, expect, test } from "bun:test";
import { canonicalHeaderName, isValidHeaderName, isValidHeaderValue } from "../../src/util/canonical-header.ts";

describe("canonicalHeaderName", () => {
  test.each([
    ["content-type", "Content-Type"],
    ["CONTENT-TYPE", "Content-Type"],
    ["x-my-header", "X-My-Header"],
    ["svc-forward-my-header", "Svc-Forward-My-Header"],
    ["accept", "Accept"],
    ["www-authenticate", "Www-Authenticate"],
    ["x-1header", "X-1header"],
    ["a--b", "A--B"],
    ["-x", "-X"],
    ["x_y.z", "X_y.z"],
  ])("%p → %p", (input, output) => {
    expect(canonicalHeaderName(input)).toBe(output);
  });

  test("invalid names are returned unchanged", () => {
    expect(canonicalHeaderName("bad header")).toBe("bad header");
    expect(canonicalHeaderName("")).toBe("");
    expect(canonicalHeaderName("ümlaut-x")).toBe("ümlaut-x");
  });
});

describe("isValidHeaderName", () => {
  test("RFC 7230 token characters", () => {
    expect(isValidHeaderName("Content-Type")).toBe(true);
    expect(isValidHeaderName("x_custom.header~1")).toBe(true);
    expect(isValidHeaderName("!#$%&'*+-.^_`|~")).toBe(true);
  });

  test.each(["", "a b", "a:b", "a\r\nb", "(x)", "a/b", 'a"b', "é", "a\tb", "a,b", "a;b", "[x]"])("rejects %p", (bad) => {
    expect(isValidHeaderName(bad)).toBe(false);
  });
});

describe("isValidHeaderValue", () => {
  test("ordinary values, tab, empty and Latin-1 are fine", () => {
    expect(isValidHeaderValue("application/json; charset=utf-8")).toBe(true);
    expect(isValidHeaderValue("a\tb")).toBe(true);
    expect(isValidHeaderValue("")).toBe(true);
    expect(isValidHeaderValue("café")).toBe(true);
    expect(isValidHeaderValue("~!@#$%^&*()")).toBe(true);
  });

  test.each(["a\rb", "a\nb", "a\r\nX-Injected: 1", "a\u0000b", "\u0001", "\u001f", "a\u007fb", "€", "😀"])(
    "rejects %p",
    (bad) => {
      expect(isValidHeaderValue(bad)).toBe(false);
    },
  );

  test("everything accepted can be put in a Headers object", () => {
    for (let c = 0; c <= 0x1ff; c++) {
      const v = `a${String.fromCharCode(c)}b`;
      if (isValidHeaderValue(v)) expect(() => new Headers({ x: v })).not.toThrow();
    }
  });
});
