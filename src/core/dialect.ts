/**
 * The wire dialect: svcd's own (`Svc-` headers) or the hosted service's (`Upstash-` headers),
 * so the hosted service's SDKs work unchanged. Every header name and issuer comes from here.
 */
export interface Dialect {
  readonly name: "svc" | "upstash";
  /** Header prefix in canonical case, e.g. `Svc`. */
  readonly prefix: string;
  /** Lower-case prefix with its dash, e.g. `svc-`, for matching incoming header names. */
  readonly lowerPrefix: string;
  readonly tokenQueryParam: string;
  readonly jwtIssuer: string;
  readonly userAgent: string;
  readonly statsPathSegment: string;
  readonly partnerEmailField: string;
}

export const DIALECTS: Record<Dialect["name"], Dialect> = {
  svc: {
    name: "svc",
    prefix: "Svc",
    lowerPrefix: "svc-",
    tokenQueryParam: "svc_token",
    jwtIssuer: "Svc",
    userAgent: "Svc",
    statsPathSegment: "svc",
    partnerEmailField: "partner_email",
  },
  upstash: {
    name: "upstash",
    prefix: "Upstash",
    lowerPrefix: "upstash-",
    tokenQueryParam: "qstash_token",
    jwtIssuer: "Upstash",
    userAgent: "Upstash-QStash",
    statsPathSegment: "qstash",
    partnerEmailField: "vercel_email",
  },
};

/** `header(d, "Retries")` → `Svc-Retries` in the svc dialect. */
export const header = (d: Dialect, suffix: string) => `${d.prefix}-${suffix}`;
