import { Type } from "@sinclair/typebox";
import type { Account } from "../../accounts/accounts.ts";
import { DEFAULT_PLANS, type PlanLimits, type PlanName } from "../../config/plans.ts";
import { newSecret } from "../../core/ids.ts";

/** What search and vector indexes share: regions, plan types, names, ids, endpoints, tokens, limits. */

export const REGIONS = ["eu-west-1", "us-central1"] as const;
export const INDEX_TYPES = ["free", "payg", "fixed"] as const satisfies readonly PlanName[];

export const Region = Type.Union(REGIONS.map((r) => Type.Literal(r)));
export const IndexType = Type.Union(INDEX_TYPES.map((r) => Type.Literal(r)));
export const IndexName = Type.String({ minLength: 1, maxLength: 64, pattern: "^[A-Za-z0-9._-]+$" });
export const IndexId = Type.String({ minLength: 1, maxLength: 64, pattern: "^[A-Za-z0-9-]+$" });

export type IndexLimits = PlanLimits["index"];

/** Per-index limit overrides a config fixture may give (-1 = unlimited). */
export const LimitOverrides = Type.Partial(
  Type.Object(
    Object.fromEntries(
      Object.keys(DEFAULT_PLANS.payg.index).map((k) => [k, Type.Integer({ minimum: -1 })]),
    ) as Record<keyof IndexLimits, ReturnType<typeof Type.Integer>>,
    { additionalProperties: false },
  ),
);

/** The index's plan defaults; the account's own (possibly overridden) limits when it is the same plan. */
export function planIndexLimits(account: Account, type: PlanName): IndexLimits {
  return type === account.plan ? { ...account.limits.index } : { ...DEFAULT_PLANS[type].index };
}

export const newIndexId = () => crypto.randomUUID();

/**
 * A config index without an explicit id gets one derived from its account and name, so it keeps
 * its id (and its recorded usage) across restarts. Shaped like a UUID (version nibble 8: custom).
 */
export function derivedIndexId(kind: string, accountId: string, name: string): string {
  const hex = new Bun.CryptoHasher("sha256").update(`${kind}\0${accountId}\0${name}`).digest("hex");
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * `https://<name>-<first 8 hex of the id>.svcd.local`: plausible and unique, never resolvable.
 * Fixed at creation; a rename keeps it, as a hosted endpoint would.
 */
export function indexEndpoint(name: string, id: string): string {
  const slug = name.toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+|-+$/g, "") || "index";
  return `https://${slug}-${id.replaceAll("-", "").slice(0, 8)}.svcd.local`;
}

export const newIndexTokens = () => ({ token: newSecret("ixt_"), readOnlyToken: newSecret("ixr_") });

export const unixSeconds = (ms: number) => Math.floor(ms / 1000);
