/**
 * `svcd health`: a container's health check. A scratch image has no curl, so the binary asks the
 * server itself. The answer is one line; `ok` is true only for a 200 within `timeoutMs`.
 */
export async function checkHealth(url: string, timeoutMs = 5_000): Promise<{ ok: boolean; line: string }> {
  const problem = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) }).then(
    (res) => (res.ok ? null : `answered ${res.status}`),
    (error: Error) => (error.name === "TimeoutError" ? `no answer within ${timeoutMs / 1000} s` : "not reachable"),
  );
  return problem === null ? { ok: true, line: `svcd health: ok (${url})` } : { ok: false, line: `svcd health: ${url} ${problem}` };
}
