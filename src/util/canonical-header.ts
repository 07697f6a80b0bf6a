/** Header names and values as HTTP (RFC 7230) and the Fetch API's Headers accept them. */

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export function isValidHeaderName(n: string): boolean {
  return TOKEN.test(n);
}

/**
 * Rejects control characters other than tab (CR/LF would allow header injection), and characters
 * above U+00FF, which `new Headers()` refuses, so bad input is a 400 instead of a crash later.
 */
export function isValidHeaderValue(v: string): boolean {
  return !/[\u0000-\u0008\u000a-\u001f\u007f\u0100-\uffff]/.test(v);
}

/**
 * `x-my-header` → `X-My-Header`, as echoed back in `header` maps. Like Go's canonical form, a name
 * that is not a valid token is returned unchanged rather than mangled.
 */
export function canonicalHeaderName(name: string): string {
  if (!isValidHeaderName(name)) return name;
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_m, sep: string, ch: string) => sep + ch.toUpperCase());
}
