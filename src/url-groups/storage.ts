import type { WriteTx } from "../store/transactor.ts";

export interface UrlGroupRow {
  account_id: string;
  name: string;
  created_at: number;
  updated_at: number;
  default_headers: string;
}

export interface EndpointRow {
  seq: number;
  name: string | null;
  url: string;
}

/**
 * URL Groups and their endpoints as every engine keeps them; every call is scoped to one account.
 * `get` and `endpoints` are read inside writes and outside (null), `list` outside; the rest runs
 * inside writes.
 */
export interface UrlGroupStorage {
  get(tx: WriteTx | null, accountId: string, name: string): Promise<UrlGroupRow | undefined>;
  list(accountId: string): Promise<UrlGroupRow[]>;
  count(tx: WriteTx, accountId: string): Promise<number>;
  /**
   * Inside a write that changes the group: reads it and its endpoints as stored now and keeps
   * them so until the write commits (another node's change of the group waits for it). The reads
   * of the write see that truth, not an older copy.
   */
  lock(tx: WriteTx, accountId: string, name: string): Promise<void>;
  /** Creates the group unless it is stored. */
  create(tx: WriteTx, accountId: string, name: string, nowMs: number): Promise<void>;
  touch(tx: WriteTx, accountId: string, name: string, nowMs: number): Promise<void>;
  /** False when the group is not stored. */
  setDefaults(
    tx: WriteTx,
    accountId: string,
    name: string,
    headers: Array<[string, string]>,
    nowMs: number,
  ): Promise<boolean>;
  /** Deletes the group and its endpoints. */
  delete(tx: WriteTx, accountId: string, name: string): Promise<boolean>;
  endpoints(tx: WriteTx | null, accountId: string, group: string): Promise<EndpointRow[]>;
  /** Returns the new endpoint's seq. */
  addEndpoint(tx: WriteTx, accountId: string, group: string, name: string | undefined, url: string): Promise<number>;
  setEndpointUrl(tx: WriteTx, seq: number, url: string): Promise<void>;
  deleteEndpoint(tx: WriteTx, seq: number): Promise<void>;
  deleteAccount(tx: WriteTx, accountId: string): Promise<void>;
}
