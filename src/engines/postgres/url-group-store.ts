import type { WriteTx } from "../../store/transactor.ts";
import type { EndpointRow, UrlGroupRow, UrlGroupStorage } from "../../url-groups/storage.ts";
import type { CachedTable } from "./cached-table.ts";

export type EndpointFull = EndpointRow & { account_id: string; group_name: string };
type Raw = Record<string, unknown>;

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * URL Groups and their endpoints, kept in memory on every node. A write that changes a group
 * locks it and reads it with its endpoints from PostgreSQL first (`lock`), then changes only what
 * the request changes: an endpoint is a row of its own, added or removed alone.
 */
export class PgUrlGroupStore implements UrlGroupStorage {
  constructor(
    readonly groups: CachedTable<UrlGroupRow & Raw>,
    readonly endpointsTable: CachedTable<EndpointFull & Raw>,
  ) {}
  private key(accountId: string, name: string) {
    return `${accountId}\u0000${name}`;
  }
  async get(tx: WriteTx | null, accountId: string, name: string): Promise<UrlGroupRow | undefined> {
    return this.groups.get(tx, this.key(accountId, name));
  }
  async list(accountId: string): Promise<UrlGroupRow[]> {
    return this.groups.where(null, (g) => g.account_id === accountId).sort(byName);
  }
  async count(tx: WriteTx, accountId: string): Promise<number> {
    return this.groups.where(tx, (g) => g.account_id === accountId).length;
  }
  async lock(tx: WriteTx, accountId: string, name: string): Promise<void> {
    const where = "account_id = $1 AND name = $2";
    await this.groups.lock(tx, where, [accountId, name], (g) => g.account_id === accountId && g.name === name);
    // The group's row lock keeps other nodes' changes of its endpoints out until this write ends.
    const ofGroup = (e: EndpointFull) => e.account_id === accountId && e.group_name === name;
    await this.endpointsTable.lock(tx, "account_id = $1 AND group_name = $2", [accountId, name], ofGroup);
  }
  async create(tx: WriteTx, accountId: string, name: string, nowMs: number): Promise<void> {
    const text = `INSERT INTO url_groups (account_id, name, created_at, updated_at, default_headers)
      VALUES ($1, $2, $3, $3, '[]') ON CONFLICT DO NOTHING RETURNING *`;
    await this.groups.returning(tx, text, [accountId, name, nowMs]);
  }
  async touch(tx: WriteTx, accountId: string, name: string, nowMs: number): Promise<void> {
    const text = "UPDATE url_groups SET updated_at = $1 WHERE account_id = $2 AND name = $3 RETURNING *";
    await this.groups.returning(tx, text, [nowMs, accountId, name]);
  }
  async setDefaults(tx: WriteTx, accountId: string, name: string, headers: Array<[string, string]>, nowMs: number) {
    const text = "UPDATE url_groups SET default_headers = $1, updated_at = $2 WHERE account_id = $3 AND name = $4 RETURNING *";
    return (await this.groups.returning(tx, text, [JSON.stringify(headers), nowMs, accountId, name])).length > 0;
  }
  async delete(tx: WriteTx, accountId: string, name: string): Promise<boolean> {
    // Its endpoints go with it (ON DELETE CASCADE): the copy here forgets them too.
    const ofGroup = (e: EndpointFull) => e.account_id === accountId && e.group_name === name;
    for (const e of this.endpointsTable.where(tx, ofGroup)) this.endpointsTable.recordDeleted(tx, String(e.seq));
    const text = "DELETE FROM url_groups WHERE account_id = $1 AND name = $2 RETURNING *";
    const isGroup = (g: UrlGroupRow) => g.account_id === accountId && g.name === name;
    return (await this.groups.deleting(tx, text, [accountId, name], isGroup)) > 0;
  }
  async endpoints(tx: WriteTx | null, accountId: string, group: string): Promise<EndpointRow[]> {
    return this.endpointsOf(tx, accountId, group).map(({ seq, name, url }) => ({ seq, name, url }));
  }
  async addEndpoint(tx: WriteTx, accountId: string, group: string, name: string | undefined, url: string) {
    const text = "INSERT INTO url_group_endpoints (account_id, group_name, name, url) VALUES ($1, $2, $3, $4) RETURNING *";
    return (await this.endpointsTable.returning(tx, text, [accountId, group, name ?? null, url]))[0]!.seq;
  }
  async setEndpointUrl(tx: WriteTx, seq: number, url: string): Promise<void> {
    const text = "UPDATE url_group_endpoints SET url = $1 WHERE seq = $2 RETURNING *";
    await this.endpointsTable.returning(tx, text, [url, seq]);
  }
  async deleteEndpoint(tx: WriteTx, seq: number): Promise<void> {
    const text = "DELETE FROM url_group_endpoints WHERE seq = $1 RETURNING *";
    await this.endpointsTable.deleting(tx, text, [seq], (e) => e.seq === seq);
  }
  async deleteAccount(tx: WriteTx, accountId: string): Promise<void> {
    const ofAccount = (r: { account_id: string }) => r.account_id === accountId;
    for (const e of this.endpointsTable.where(tx, ofAccount)) this.endpointsTable.recordDeleted(tx, String(e.seq));
    await this.groups.deleting(tx, "DELETE FROM url_groups WHERE account_id = $1 RETURNING *", [accountId], ofAccount);
  }
  private endpointsOf(tx: WriteTx | null, accountId: string, group: string): EndpointFull[] {
    return this.endpointsTable
      .where(tx, (e) => e.account_id === accountId && e.group_name === group)
      .sort((a, b) => a.seq - b.seq);
  }
}
