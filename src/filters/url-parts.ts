/**
 * The host and the path of a stored URL, in SQL, so the `host` and `path` filters need no extra
 * columns: URLs are stored byte for byte as given, and filtering is rare next to writing. The
 * steps follow `scheme://[userinfo@]host[:port][/path][?query][#fragment]`, each computed once
 * per row in a nested subquery.
 */

/** `instr` answers 0 for "not found"; as a position that is "after the end". */
const found = (position: string) => `(CASE WHEN ${position} = 0 THEN 1000000000 ELSE ${position} END)`;

/**
 * A one-row table of `url`'s parts: `host_port` (lower case, without user info: `a.example:8080`),
 * `host_name` (`a.example`; an IPv6 literal keeps its brackets) and `path` (`/` when there is none).
 */
export function urlPartsSql(url: string): string {
  const rest = `SELECT substr(${url}, instr(${url}, '://') + 3) AS r`;
  const split = `SELECT r, min(${found("instr(r, '/')")}, ${found("instr(r, '?')")}, ${found("instr(r, '#')")}) AS e FROM (${rest})`;
  const pieces = `SELECT lower(substr(substr(r, 1, e - 1), instr(substr(r, 1, e - 1), '@') + 1)) AS hp, substr(r, e) AS tail FROM (${split})`;
  const path = `substr(tail, 1, min(${found("instr(tail, '?')")}, ${found("instr(tail, '#')")}) - 1)`;
  return `(SELECT hp AS host_port,
      CASE WHEN substr(hp, 1, 1) = '[' THEN substr(hp, 1, instr(hp, ']')) ELSE substr(hp, 1, ${found("instr(hp, ':')")} - 1) END AS host_name,
      CASE WHEN ${path} = '' THEN '/' ELSE ${path} END AS path
    FROM (${pieces}))`;
}
