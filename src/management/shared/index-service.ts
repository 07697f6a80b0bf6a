import { Type } from "@sinclair/typebox";
import type { Account } from "../../accounts/accounts.ts";
import { badRequest, notFound } from "../../core/errors.ts";
import type { MetricsEngine } from "../../metrics/engine.ts";
import type { WriteTx } from "../../store/transactor.ts";
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

  async list(account: Account): Promise<object[]> {
    return Promise.all((await this.store.list(account.id)).map((row) => this.toJson(account, row)));
  }

  async get(account: Account, id: string): Promise<object> {
    return this.toJson(account, await this.row(account, id));
  }

  // Whether the index exists is what the write finds stored (another node may have just created
  // or deleted it), not what this node last heard.
  async rename(account: Account, id: string, name: string): Promise<void> {
    const renamed = await this.deps.commit.run(async (tx) => {
      if ((await this.store.get(tx, account.id, id))?.name !== name) await this.assertFreeName(tx, account, name);
      return this.store.rename(tx, account.id, id, name);
    });
    if (!renamed) this.notFound(id);
  }

  async resetPassword(account: Account, id: string): Promise<void> {
    const { token, readOnlyToken } = newIndexTokens();
    const changed = await this.deps.commit.run((tx) => this.store.setTokens(tx, account.id, id, token, readOnlyToken));
    if (!changed) this.notFound(id);
  }

  async remove(account: Account, id: string): Promise<void> {
    // Its statistics go with it, in the same write.
    const deleted = await this.deps.commit.run(async (tx) => {
      const found = await this.store.delete(tx, account.id, id);
      if (found) await this.engine.forget(tx, id);
      return found;
    });
    if (!deleted) this.notFound(id);
  }

  /** The account's index, else 404: another account's index does not exist for this caller. */
  async row(account: Account, id: string): Promise<Row> {
    return (await this.store.get(null, account.id, id)) ?? this.notFound(id);
  }

  private notFound(id: string): never {
    throw notFound(`${this.label} ${id} not found`);
  }

  protected async insert(account: Account, row: Row): Promise<object> {
    await this.assertFreeName(null, account, row.name);
    await this.deps.commit.run((tx) => this.store.upsert(tx, row));
    return this.toJson(account, row);
  }

  private async assertFreeName(tx: WriteTx | null, account: Account, name: string): Promise<void> {
    const holder = await this.store.idByName(tx, account.id, name);
    if (holder) throw badRequest(`a ${this.label} named "${name}" already exists`);
  }
}
