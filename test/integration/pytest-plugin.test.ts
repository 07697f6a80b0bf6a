/**
 * The pytest plugin (src/testing/svcd_pytest.py) as a Python user loads it, with `-p svcd_pytest`:
 * test/testing-kit/test_pytest_plugin.py publishes, advances the manual clock, reads the DLQ and
 * relies on the reset between tests; with the official `qstash` package installed it also
 * publishes and verifies through it (skipped, with its reason, where PyPI was out of reach).
 */
import { expect, test } from "bun:test";
import { testUnless } from "../helpers/skip.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const python = Bun.which("python3");
const pytest = python && Bun.spawnSync([python, "-c", "import pytest"]).exitCode === 0;
const hasQstash = python && Bun.spawnSync([python, "-c", "import qstash"]).exitCode === 0;

testUnless(pytest ? null : "no python3 with pytest")("the svcd fixture serves a pytest suite (needs python3 with pytest)", async () => {
  const proc = Bun.spawn(
    [python!, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-p", "svcd_pytest", "--svcd-clock", "manual", "test/testing-kit/test_pytest_plugin.py"],
    { cwd: ROOT, stdout: "pipe", stderr: "pipe", env: { ...process.env, PYTHONPATH: `${ROOT}src/testing`, PYTHONDONTWRITEBYTECODE: "1" } },
  );
  const [exit, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  expect({ exit, out: exit === 0 ? "" : out + err }).toEqual({ exit: 0, out: "" });
  if (hasQstash) expect(out).toContain("3 passed");
  else {
    expect(out).toContain("2 passed, 1 skipped");
    expect(out).toContain("the official qstash package is not installed");
  }
}, 120_000);
