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

/** URL Groups and their endpoints as every engine keeps them; every call is scoped to one account. */
export interface UrlGroupStorage {
  get(accountId: string, name: string): UrlGroupRow | undefined;
  list(accountId: string): UrlGroupRow[];
  count(accountId: string): number;
  /**
   * Inside a write that changes the group: reads it and its endpoints as stored now and keeps
   * them so until the write commits (another node's change of the group waits for it). The reads
   * of the write see that truth, not an older copy.
   */
  lock(accountId: string, name: string): void;
  /** Creates the group unless it is stored. */
  create(accountId: string, name: string, nowMs: number): void;
  touch(accountId: string, name: string, nowMs: number): void;
  /** False when the group is not stored. */
  setDefaults(accountId: string, name: string, headers: Array<[string, string]>, nowMs: number): boolean;
  /** Deletes the group and its endpoints. */
  delete(accountId: string, name: string): boolean;
  endpoints(accountId: string, group: string): EndpointRow[];
  /** Returns the new endpoint's seq. */
  addEndpoint(accountId: string, group: string, name: string | undefined, url: string): number;
  setEndpointUrl(seq: number, url: string): void;
  deleteEndpoint(seq: number): void;
  deleteAccount(accountId: string): void;
}
