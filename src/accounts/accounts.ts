import { timingSafeEqual } from "node:crypto";
import type { AccountConfig, ConfigFile } from "../config/config-file.ts";
import { DEFAULT_ACCOUNT, type DefaultAccountSeed } from "../config/config.ts";
import { newSigningKey } from "../core/ids.ts";
import { DEFAULT_PLANS, type PlanLimits, type PlanName } from "../config/plans.ts";
import { acceptedTokens, hostedToken } from "./hosted-token.ts";
import type { AccountRow, AccountStorage } from "./storage.ts";
import type { RequestLimits } from "./rate-limits.ts";
import type { Transactor, WriteTx } from "../store/transactor.ts";

export interface Account {
  /** The messaging user id; also the owner id of every row the account has. */
  readonly id: string;
  readonly email: string;
  readonly plan: PlanName;
  readonly limits: PlanLimits;
  currentSigningKey: string;
  nextSigningKey: string;
  /** The config entry it came from (fixtures live there). */
  readonly source: AccountConfig;
  /** Its read-only token: as configured, else derived from its token (stable across restarts). */
  readonly readOnlyToken: string;
}

/** Who a messaging token lets in, and whether it may only read. */
export interface TokenAccess {
  account: Account;
  readOnly: boolean;
}

/**
 * An account without a configured read-only token gets one derived from its token: unguessable
 * without it, the same at every start.
 */
export const derivedReadOnlyToken = (token: string) =>
  "ro_" + new Bun.CryptoHasher("sha256").update(`svcd read-only:${token}`).digest("hex").slice(0, 40);

interface Credentials {
  account: Account;
  tokenHashes: Uint8Array[];
  readOnlyHashes: Uint8Array[];
  basicHash: Uint8Array;
}

const sha256 = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest() as Uint8Array;

/**
 * The accounts of this server, loaded from the config file (or the default account) at start.
 * Lookups compare hashes of every account in constant time, so timing reveals nothing.
 */
export class AccountRegistry {
  private readonly credentials: Credentials[] = [];
  private readonly byIdMap = new Map<string, Account>();

  private constructor(
    private readonly store: AccountStorage,
    /** The plans' burst and daily limits (none when absent). */
    private readonly requestLimits: RequestLimits | undefined,
  ) {}

  /**
   * The configured accounts, stored at start (each account that changed in a write of its own,
   * through the group commit `commit`).
   */
  static async open(
    store: AccountStorage,
    commit: Pick<Transactor, "run">,
    entries: AccountConfig[],
    planOverrides: ConfigFile["plans"] = {},
    /** The hosted dialect: tokens are also accepted in the hosted service's shape (see hosted-token.ts). */
    hostedTokens = false,
    requestLimits?: RequestLimits,
  ): Promise<AccountRegistry> {
    const registry = new AccountRegistry(store, requestLimits);
    const stored = new Map((await store.all()).map((row) => [row.id, row]));
    for (const entry of entries) {
      const plan = entry.plan ?? "payg";
      const configuredKeys = JSON.stringify([entry.currentSigningKey ?? null, entry.nextSigningKey ?? null]);
      const previous = stored.get(entry.userId);
      // Keys rotated through the API survive a restart unless the config now says otherwise.
      const keepStored = previous && previous.configured_keys === configuredKeys;
      const configured: AccountRow = {
        id: entry.userId,
        email: entry.email,
        api_key: entry.apiKey,
        token: entry.token,
        plan,
        current_signing_key: keepStored ? previous.current_signing_key : (entry.currentSigningKey ?? newSigningKey()),
        next_signing_key: keepStored ? previous.next_signing_key : (entry.nextSigningKey ?? newSigningKey()),
        configured_keys: configuredKeys,
      };
      // An unchanged account is not written: a restart with the same config works on a full disk.
      // Another node starting at once may have stored it first: its keys are the ones kept.
      const row =
        previous && sameRow(previous, configured) ? previous : await commit.run((tx) => store.upsert(tx, configured));
      registry.add(entry, plan, row, planLimits(plan, planOverrides), hostedTokens);
    }
    return registry;
  }

  private add(entry: AccountConfig, plan: PlanName, row: AccountRow, limits: PlanLimits, hostedTokens: boolean): void {
    const account: Account = {
      id: entry.userId,
      email: entry.email,
      plan,
      limits,
      currentSigningKey: row.current_signing_key,
      nextSigningKey: row.next_signing_key,
      source: entry,
      readOnlyToken: entry.readOnlyToken ?? derivedReadOnlyToken(entry.token),
    };
    this.byIdMap.set(account.id, account);
    this.credentials.push({
      account,
      tokenHashes: acceptedTokens(entry.token, entry.userId, hostedTokens).map(sha256),
      readOnlyHashes: acceptedTokens(account.readOnlyToken, entry.userId, hostedTokens).map(sha256),
      basicHash: sha256(`${entry.email}:${entry.apiKey}`),
    });
  }

  /**
   * The config file's accounts, else the default account. In the hosted dialect the default
   * account's built-in token takes the hosted shape, so the workflow SDK finds its user id in it
   * (its plain form is still accepted).
   */
  static entriesFrom(file: ConfigFile | null, seed: DefaultAccountSeed, hostedTokens = false): AccountConfig[] {
    if (file?.accounts && file.accounts.length > 0) return file.accounts;
    const builtIn = hostedTokens && seed.token === DEFAULT_ACCOUNT.token;
    // A token of one's own keeps the well-known read-only token out: it is derived from the token
    // instead (unless SVC_READONLY_TOKEN names one).
    const knownReader = seed.readOnlyToken === DEFAULT_ACCOUNT.readOnlyToken && seed.token !== DEFAULT_ACCOUNT.token;
    const token = builtIn ? hostedToken(seed.userId, seed.token) : seed.token;
    return [{ ...seed, token, readOnlyToken: knownReader ? undefined : seed.readOnlyToken }];
  }

  all(): Account[] {
    return [...this.byIdMap.values()];
  }
  byId(id: string): Account | undefined {
    return this.byIdMap.get(id);
  }
  byToken(token: string): Account | undefined {
    const access = this.byAnyToken(token);
    return access && !access.readOnly ? access.account : undefined;
  }
  /** The account of a token or of a read-only token; every hash is compared, whichever matches. */
  byAnyToken(token: string): TokenAccess | undefined {
    const hash = sha256(token);
    let found: TokenAccess | undefined;
    for (const c of this.credentials) {
      for (const [hashes, readOnly] of [[c.tokenHashes, false], [c.readOnlyHashes, true]] as const)
        for (const tokenHash of hashes) if (timingSafeEqual(tokenHash, hash) && !found) found = { account: c.account, readOnly };
    }
    return found;
  }
  /** Throws (or rejects with) the 429 a messaging request meets under its account's plan limits, else counts it. */
  admit(account: Account, method: string, path: string): void | Promise<void> {
    return this.requestLimits?.admit(account, method, path);
  }

  /** `admit` for a publishing request (publish, enqueue): never waits. */
  admitPublish(account: Account): void {
    this.requestLimits?.admitPublish(account);
  }
  byBasic(email: string, apiKey: string): Account | undefined {
    const hash = sha256(`${email}:${apiKey}`);
    let found: Account | undefined;
    for (const c of this.credentials) if (timingSafeEqual(c.basicHash, hash) && !found) found = c.account;
    return found;
  }

  /** Another process rotated keys: every account takes the keys stored now. */
  async reloadKeys(): Promise<void> {
    for (const row of await this.store.all()) {
      const account = this.byIdMap.get(row.id);
      if (!account) continue;
      account.currentSigningKey = row.current_signing_key;
      account.nextSigningKey = row.next_signing_key;
    }
  }

  /**
   * Inside a write: next becomes current and a new next is made, from the keys stored now (a
   * rotation through another node meanwhile counts). This node signs with them once committed.
   */
  async rotateKeys(tx: WriteTx, account: Account): Promise<{ current: string; next: string }> {
    const row = await this.store.rotateKeys(tx, account.id, newSigningKey());
    if (!row) throw new Error(`account ${account.id} is not stored`);
    const keys = { current: row.current_signing_key, next: row.next_signing_key };
    tx.afterCommit((committed) => {
      if (!committed) return;
      account.currentSigningKey = keys.current;
      account.nextSigningKey = keys.next;
    });
    return keys;
  }
}

/** A plan's limits with the config file's overrides; `null` there means no limit. */
function planLimits(plan: PlanName, overrides: ConfigFile["plans"]): PlanLimits {
  const merged: PlanLimits = { ...DEFAULT_PLANS[plan] };
  for (const [key, value] of Object.entries(overrides?.[plan] ?? {})) {
    if (isLimit(merged, key)) merged[key] = value === null || value === undefined ? Infinity : value;
  }
  return merged;
}

/** A plan's numeric limit by name (the config file's schema allows only those). */
const isLimit = (limits: PlanLimits, key: string): key is Exclude<keyof PlanLimits, "index"> => key in limits && key !== "index";

function sameRow(a: AccountRow, b: AccountRow): boolean {
  return (Object.keys(b) as Array<keyof AccountRow>).every((key) => a[key] === b[key]);
}
