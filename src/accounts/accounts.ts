import { timingSafeEqual } from "node:crypto";
import type { AccountConfig, ConfigFile } from "../config/config-file.ts";
import type { DefaultAccountSeed } from "../config/config.ts";
import { newSigningKey } from "../core/ids.ts";
import { DEFAULT_PLANS, type PlanLimits, type PlanName } from "../config/plans.ts";
import type { AccountRow, AccountStore } from "./store.ts";

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
}

interface Credentials {
  account: Account;
  tokenHash: Uint8Array;
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

  constructor(
    private readonly store: AccountStore,
    entries: AccountConfig[],
    planOverrides: ConfigFile["plans"] = {},
  ) {
    const stored = new Map(store.all().map((row) => [row.id, row]));
    for (const entry of entries) {
      const plan = entry.plan ?? "payg";
      const configuredKeys = JSON.stringify([entry.currentSigningKey ?? null, entry.nextSigningKey ?? null]);
      const previous = stored.get(entry.userId);
      // Keys rotated through the API survive a restart unless the config now says otherwise.
      const keepStored = previous && previous.configured_keys === configuredKeys;
      const current = keepStored ? previous.current_signing_key : (entry.currentSigningKey ?? newSigningKey());
      const next = keepStored ? previous.next_signing_key : (entry.nextSigningKey ?? newSigningKey());
      const row: AccountRow = {
        id: entry.userId,
        email: entry.email,
        api_key: entry.apiKey,
        token: entry.token,
        plan,
        current_signing_key: current,
        next_signing_key: next,
        configured_keys: configuredKeys,
      };
      // An unchanged account is not written: a restart with the same config works on a full disk.
      if (!previous || !sameRow(previous, row)) store.upsert(row);
      const account: Account = {
        id: entry.userId,
        email: entry.email,
        plan,
        limits: { ...DEFAULT_PLANS[plan], ...(planOverrides?.[plan] ?? {}) },
        currentSigningKey: current,
        nextSigningKey: next,
        source: entry,
      };
      this.byIdMap.set(account.id, account);
      this.credentials.push({
        account,
        tokenHash: sha256(entry.token),
        basicHash: sha256(`${entry.email}:${entry.apiKey}`),
      });
    }
  }

  static entriesFrom(file: ConfigFile | null, seed: DefaultAccountSeed): AccountConfig[] {
    if (file?.accounts && file.accounts.length > 0) return file.accounts;
    return [{ ...seed }];
  }

  all(): Account[] {
    return [...this.byIdMap.values()];
  }
  byId(id: string): Account | undefined {
    return this.byIdMap.get(id);
  }
  byToken(token: string): Account | undefined {
    return this.match(sha256(token), "tokenHash");
  }
  byBasic(email: string, apiKey: string): Account | undefined {
    return this.match(sha256(`${email}:${apiKey}`), "basicHash");
  }

  rotateKeys(account: Account): { current: string; next: string } {
    const current = account.nextSigningKey;
    const next = newSigningKey();
    this.store.setKeys(account.id, current, next);
    account.currentSigningKey = current;
    account.nextSigningKey = next;
    return { current, next };
  }

  private match(hash: Uint8Array, field: "tokenHash" | "basicHash"): Account | undefined {
    let found: Account | undefined;
    for (const c of this.credentials) {
      if (timingSafeEqual(c[field], hash) && !found) found = c.account;
    }
    return found;
  }
}

function sameRow(a: AccountRow, b: AccountRow): boolean {
  return (Object.keys(b) as Array<keyof AccountRow>).every((key) => a[key] === b[key]);
}
