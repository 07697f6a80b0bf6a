import { describe, expect, test } from "bun:test";
import { pickLocale } from "../../src/console/web/locale.ts";

describe("the console's locale", () => {
  test("a tag Intl accepts is taken as it is, canonical", () => {
    expect(pickLocale(["de-DE", "en-US"])).toBe("de-DE");
    expect(pickLocale(["en-us"])).toBe("en-US");
  });

  test("a POSIX locale name is repaired to the tag it names", () => {
    // What headless Chromium reports under LANG=C.UTF-8; Intl refuses it.
    expect(() => new Intl.NumberFormat("en-US@posix")).toThrow(RangeError);
    expect(pickLocale(["en-US@posix"])).toBe("en-US");
    expect(pickLocale(["de_DE.UTF-8@euro"])).toBe("de-DE");
    expect(pickLocale(["fr_FR"])).toBe("fr-FR");
  });

  test("what names no language is skipped for the next one, and en-US is the last resort", () => {
    expect(pickLocale(["C", "POSIX", "C.UTF-8", "", undefined, "nl-NL"])).toBe("nl-NL");
    expect(pickLocale(["C.UTF-8", "@@@"])).toBe("en-US");
    expect(pickLocale([])).toBe("en-US");
  });

  test("every answer is one that every Intl formatter accepts", () => {
    for (const raw of ["en-US@posix", "C", "x", "zz_ZZ.ISO-8859-1", "i-klingon", "ja-JP-u-ca-japanese"]) {
      const tag = pickLocale([raw]);
      expect(() => [new Intl.NumberFormat(tag), new Intl.DateTimeFormat(tag), new Intl.PluralRules(tag)]).not.toThrow();
    }
  });
});
