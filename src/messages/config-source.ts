import type { Dialect } from "../core/dialect.ts";

const EMPTY_HEADERS = new Headers();

/** `<prefix><suffix>` in lowercase, made once per name: option names are a fixed set. */
const lowerNames = new Map<string, Map<string, string>>();
function lowerName(lowerPrefix: string, suffix: string): string {
  let names = lowerNames.get(lowerPrefix);
  if (!names) lowerNames.set(lowerPrefix, (names = new Map()));
  let name = names.get(suffix);
  if (name === undefined) names.set(suffix, (name = lowerPrefix + suffix.toLowerCase()));
  return name;
}
const EMPTY_MAP = new Map<string, string>();

/** The headers whose (lowercase) name starts with `lowerPrefix`, in their order. */
function ownHeaders(headers: Headers, lowerPrefix: string): Map<string, string> {
  const out = new Map<string, string>();
  headers.forEach((value, name) => {
    if (name.startsWith(lowerPrefix)) out.set(name, value);
  });
  return out;
}

/**
 * Reads configuration headers, falling back to the lowercase query parameter of the same name
 * (`Svc-Retries` or `?svc-retries=`). Header names are matched case-insensitively.
 * Each source is walked once, keeping only the dialect's own names: a publish asks for twenty
 * of them, and twenty lookups in every source cost more than the rest of reading the options.
 */
export class ConfigSource {
  private readonly fromHeaders: Map<string, string>;
  private readonly fromQuery: Array<[string, string]>;
  private readonly fromDefaults: Map<string, string>;

  constructor(
    readonly dialect: Dialect,
    readonly headers: Headers,
    readonly query: URLSearchParams,
    /** Group defaults: lowest precedence (PATCH /v2/topics/{name}). */
    readonly defaults: Headers = EMPTY_HEADERS,
  ) {
    this.fromHeaders = ownHeaders(headers, dialect.lowerPrefix);
    this.fromDefaults = defaults === EMPTY_HEADERS ? EMPTY_MAP : ownHeaders(defaults, dialect.lowerPrefix);
    this.fromQuery = [];
    if (query.size > 0)
      query.forEach((value, name) => {
        if (name.toLowerCase().startsWith(dialect.lowerPrefix)) this.fromQuery.push([name, value]);
      });
  }

  name(suffix: string): string {
    return `${this.dialect.prefix}-${suffix}`;
  }
  get(suffix: string): string | undefined {
    // Most publishes set a few options or none: the twenty lookups of the rest find empty sources.
    if (this.fromHeaders.size === 0 && this.fromQuery.length === 0 && this.fromDefaults.size === 0) return undefined;
    const lower = lowerName(this.dialect.lowerPrefix, suffix);
    return this.fromHeaders.get(lower) ?? this.queryValue(lower) ?? this.fromDefaults.get(lower);
  }
  /** Every `<Prefix>-<infix>{Name}` header and query parameter, as `[Name, value]`. */
  prefixed(infix: string): Array<[string, string]> {
    const lower = `${this.dialect.lowerPrefix}${infix.toLowerCase()}`;
    const found = new Map<string, [string, string]>();
    const collect = (value: string, name: string) => {
      const lowerName = name.toLowerCase();
      if (lowerName.startsWith(lower) && lowerName.length > lower.length) {
        const rest = name.slice(lower.length);
        const key = rest.toLowerCase();
        if (!found.has(key)) found.set(key, [rest, value]);
      }
    };
    this.fromHeaders.forEach(collect);
    for (const [name, value] of this.fromQuery) collect(value, name);
    this.fromDefaults.forEach(collect);
    return [...found.values()];
  }

  /** The first value of a query parameter named exactly `name` (query names are case-sensitive). */
  private queryValue(name: string): string | undefined {
    for (const [key, value] of this.fromQuery) if (key === name) return value;
    return undefined;
  }
}
