import { test } from "bun:test";

type TestFn = Parameters<typeof test>[1];

/**
 * `test` when `missing` is null; otherwise the test is skipped and its title ends with
 * "(skipped: <what is missing>)", so the reason shows in bun's output and in the JUnit report.
 */
export function testUnless(missing: string | null) {
  return (title: string, fn: TestFn, timeout?: number) =>
    missing === null ? test(title, fn, timeout) : test.skip(`${title} (skipped: ${missing})`, fn, timeout);
}
