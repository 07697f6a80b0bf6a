import type { WriteTx } from "../../store/transactor.ts";

/** What every index row has, search or vector. */
export type IndexRowBase = {
  id: string;
  account_id: string;
  name: string;
  token: string;
  read_only_token: string;
  creation_time: number;
};

/**
 * One index table (search or vector indexes) as every engine keeps it; indexes differ only in
 * columns. `list` is read outside writes, `get` and `idByName` inside and outside (null); the rest
 * runs inside writes.
 */
export interface IndexStorage<Row extends IndexRowBase> {
  list(accountId: string): Promise<Row[]>;
  get(tx: WriteTx | null, accountId: string, id: string): Promise<Row | null>;
  /** Any account's row: fixtures keep what an earlier start generated (tokens, creation time). */
  byId(tx: WriteTx, id: string): Promise<Row | null>;
  idByName(tx: WriteTx | null, accountId: string, name: string): Promise<string | null>;
  upsert(tx: WriteTx, row: Row): Promise<void>;
  rename(tx: WriteTx, accountId: string, id: string, name: string): Promise<boolean>;
  setTokens(tx: WriteTx, accountId: string, id: string, token: string, readOnlyToken: string): Promise<boolean>;
  delete(tx: WriteTx, accountId: string, id: string): Promise<boolean>;
}
