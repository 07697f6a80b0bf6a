import { describe, expect, test } from "bun:test";
import { bodyFields, fromBase64, isUtf8, toBase64 } from "../../src/util/base64.ts";

const bytes = (...b: number[]) => new Uint8Array(b);
const enc = new TextEncoder();

describe("toBase64 / fromBase64", () => {
  test("standard alphabet with padding", () => {
    expect(toBase64(enc.encode("hello"))).toBe("aGVsbG8=");
    expect(toBase64(bytes(0xfb, 0xff))).toBe("+/8=");
    expect(toBase64(new Uint8Array())).toBe("");
  });

  test("encodes only the view, not the whole underlying buffer", () => {
    const whole = enc.encode("xxhelloxx");
    expect(toBase64(whole.subarray(2, 7))).toBe("aGVsbG8=");
  });

  test("round-trips every byte value", () => {
    const all = new Uint8Array(256).map((_, i) => i);
    expect(fromBase64(toBase64(all))).toEqual(all);
  });

  test("decodes with or without padding, and url-safe text", () => {
    expect(new TextDecoder().decode(fromBase64("aGVsbG8="))).toBe("hello");
    expect(new TextDecoder().decode(fromBase64("aGVsbG8"))).toBe("hello");
    expect(fromBase64("-_8")).toEqual(bytes(0xfb, 0xff));
    expect(fromBase64("+/8=")).toEqual(bytes(0xfb, 0xff));
    expect(fromBase64("")).toEqual(new Uint8Array());
  });

  test("returns a plain Uint8Array", () => {
    expect(fromBase64("AA==").constructor).toBe(Uint8Array);
  });

  test.each(["a", "aGVs*G8=", "aGVs bG8=", "aGVsbG8===", "=aGVs", "abcde"])("rejects %p", (bad) => {
    expect(() => fromBase64(bad)).toThrow(/invalid base64/);
  });
});

describe("isUtf8", () => {
  test("valid UTF-8", () => {
    expect(isUtf8(enc.encode("héllo ✓ 😀"))).toBe(true);
    expect(isUtf8(new Uint8Array())).toBe(true);
    expect(isUtf8(bytes(0xef, 0xbb, 0xbf, 0x41))).toBe(true);
  });

  test("invalid sequences", () => {
    expect(isUtf8(bytes(0xff))).toBe(false);
    expect(isUtf8(bytes(0xc3))).toBe(false);
    expect(isUtf8(bytes(0xc0, 0x80))).toBe(false);
    expect(isUtf8(bytes(0xed, 0xa0, 0x80))).toBe(false);
    expect(isUtf8(bytes(0x41, 0x80, 0x42))).toBe(false);
  });

  test("a failure does not poison the next call", () => {
    expect(isUtf8(bytes(0xe2, 0x9c))).toBe(false);
    expect(isUtf8(bytes(0x93))).toBe(false);
    expect(isUtf8(enc.encode("ok"))).toBe(true);
  });
});

describe("bodyFields", () => {
  test("UTF-8 body goes under the plain key", () => {
    expect(bodyFields(enc.encode('{"a":1}'), "body", "bodyBase64")).toEqual({ body: '{"a":1}' });
  });

  test("binary body goes under the base64 key", () => {
    expect(bodyFields(bytes(0xff, 0x00), "body", "bodyBase64")).toEqual({ bodyBase64: "/wA=" });
  });

  test("empty body gives no field at all", () => {
    expect(bodyFields(new Uint8Array(), "body", "bodyBase64")).toEqual({});
  });

  test("a leading BOM is kept so the text maps back to the same bytes", () => {
    const withBom = bytes(0xef, 0xbb, 0xbf, 0x68, 0x69);
    const text = bodyFields(withBom, "body", "bodyBase64").body ?? "";
    expect(text).toBe("\uFEFFhi");
    expect(enc.encode(text)).toEqual(withBom);
  });

  test("custom key names", () => {
    expect(bodyFields(enc.encode("x"), "responseBody", "responseBodyBase64")).toEqual({ responseBody: "x" });
  });
});
