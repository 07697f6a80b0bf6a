/** Everything after `marker` in the raw request URL, before any normalisation. */
export function rawAfter(request: Request, marker: string): string {
  const at = request.url.indexOf(marker);
  return at < 0 ? "" : request.url.slice(at + marker.length);
}

/** What a handler needs of the server that received its request. */
export type RequestServer = { requestIP(r: Request): { address: string } | null } | null;

export function callerIp(server: RequestServer, request: Request) {
  return server?.requestIP(request)?.address;
}
