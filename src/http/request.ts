/** Everything after `marker` in the raw request URL, before any normalisation. */
export function rawAfter(request: Request, marker: string): string {
  const at = request.url.indexOf(marker);
  return at < 0 ? "" : request.url.slice(at + marker.length);
}

export function callerIp(server: { requestIP(r: Request): { address: string } | null } | null, request: Request) {
  return server?.requestIP(request)?.address;
}
