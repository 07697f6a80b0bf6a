/** An account as stored (every engine stores the same columns). */
export type AccountRow = {
  id: string;
  email: string;
  api_key: string;
  token: string;
  plan: string;
  current_signing_key: string;
  next_signing_key: string;
  configured_keys: string;
};

/** The accounts and their keys, as every engine keeps them (read at start, written inside writes). */
export interface AccountStorage {
  all(): AccountRow[];
  upsert(row: AccountRow): void;
  setKeys(id: string, current: string, next: string): void;
}
