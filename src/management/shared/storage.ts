/** What every index row has, search or vector. */
export type IndexRowBase = {
  id: string;
  account_id: string;
  name: string;
  token: string;
  read_only_token: string;
  creation_time: number;
};

/** One index table (search or vector indexes) as every engine keeps it; indexes differ only in columns. */
export interface IndexStorage<Row extends IndexRowBase> {
  list(accountId: string): Row[];
  get(accountId: string, id: string): Row | null;
  /** Any account's row: fixtures keep what an earlier start generated (tokens, creation time). */
  byId(id: string): Row | null;
  idByName(accountId: string, name: string): string | null;
  upsert(row: Row): void;
  rename(accountId: string, id: string, name: string): boolean;
  setTokens(accountId: string, id: string, token: string, readOnlyToken: string): boolean;
  delete(accountId: string, id: string): boolean;
}
