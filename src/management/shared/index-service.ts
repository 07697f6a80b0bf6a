import { Type } from "@sinclair/typebox";
import type { Account } from "../../accounts/accounts.ts";
import { badRequest, notFound } from "../../core/errors.ts";
import type { MetricsEngine } from "../../metrics/engine.ts";
import type { ManagementDeps } from "./deps.ts";
import type { IndexRowBase, IndexStorage } from "./storage.ts";
import { IndexName, newIndexTokens } from "./indexes.ts";

export const RenameIndex = Type.Object({ name: IndexName }, { additionalProperties: false });

/** What search and vector indexes do alike: list, get, rename, reset tokens, delete, scoping. */
export abstract class IndexService<Row extends IndexRowBase> {
  constructor(
    protected readonly store: IndexStorage<Row>,
    protected readonly engine: MetricsEngine,
    protected readonly deps: ManagementDeps,
    /** "search index" or "vector index", for messages. */
    private readonly label: string,
  ) {}

  protected abstract toJson(account: Account, row: Row): object | Promise<object>;

  list(account: Account): Promise<object[]> {
    return Promise.all(this.store.list(account.id).map((row) => this.toJson(account, row)));
  }

  async get(account: Account, id: string): Promise<object> {
    return this.toJson(account, this.row(account, id));
  }

  async rename(account: Account, id: string, name: string): Promise<void> {
    if (this.row(account, id).name !== name) this.assertFreeName(account, name);
    await this.deps.commit.run(() => this.store.rename(account.id, id, name));
  }

  async resetPassword(account: Account, id: string): Promise<void> {
    this.row(account, id);
    const tokens = newIndexTokens();
    await this.deps.commit.run(() => this.store.setTokens(account.id, id, tokens.token, tokens.readOnlyToken));
  }

  async remove(account: Account, id: string): Promise<void> {
    this.row(account, id);
    // Its statistics go with it, in the same write.
    await this.deps.commit.run(() => {
      this.store.delete(account.id, id);
      this.engine.forget(id);
    });
  }

  /** The account's index, else 404: another account's index does not exist for this caller. */
  row(account: Account, id: string): Row {
    const row = this.store.get(account.id, id);
    if (!row) throw notFound(`${this.label} ${id} not found`);
    return row;
  }

  protected async insert(account: Account, row: Row): Promise<object> {
    this.assertFreeName(account, row.name);
    await this.deps.commit.run(() => this.store.upsert(row));
    return this.toJson(account, row);
  }

  private assertFreeName(account: Account, name: string) {
    if (this.store.idByName(account.id, name)) throw badRequest(`a ${this.label} named "${name}" already exists`);
  }
}
