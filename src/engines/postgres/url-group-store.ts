import type { EndpointRow, UrlGroupRow, UrlGroupStorage } from "../../url-groups/storage.ts";
import type { CachedTable } from "./cached-table.ts";
import type { TickScope } from "./tick.ts";

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
    private readonly scope: TickScope,
    readonly groups: CachedTable<UrlGroupRow & Raw>,
    readonly endpointsTable: CachedTable<EndpointFull & Raw>,
  ) {}
  private key(accountId: string, name: string) {
    return `${accountId}\u0000${name}`;
  }
  get(accountId: string, name: string): UrlGroupRow | undefined {
    return this.groups.get(this.key(accountId, name));
  }
  list(accountId: string): UrlGroupRow[] {
    return this.groups.where((g) => g.account_id === accountId).sort(byName);
  }
  count(accountId: string): number {
    return this.groups.where((g) => g.account_id === accountId).length;
  }
  lock(accountId: string, name: string): void {
    const where = "account_id = $1 AND name = $2";
    this.groups.lock(where, [accountId, name], (g) => g.account_id === accountId && g.name === name);
    // The group's row lock keeps other nodes' changes of its endpoints out until this write ends.
    const ofGroup = (e: EndpointFull) => e.account_id === accountId && e.group_name === name;
    this.endpointsTable.lock("account_id = $1 AND group_name = $2", [accountId, name], ofGroup);
  }
  create(accountId: string, name: string, nowMs: number): void {
    const text = `INSERT INTO url_groups (account_id, name, created_at, updated_at, default_headers)
      VALUES ($1, $2, $3, $3, '[]') ON CONFLICT DO NOTHING RETURNING *`;
    this.groups.returning(text, [accountId, name, nowMs]);
  }
  touch(accountId: string, name: string, nowMs: number): void {
    const text = "UPDATE url_groups SET updated_at = $1 WHERE account_id = $2 AND name = $3 RETURNING *";
    this.groups.returning(text, [nowMs, accountId, name]);
  }
  setDefaults(accountId: string, name: string, headers: Array<[string, string]>, nowMs: number): boolean {
    const text = "UPDATE url_groups SET default_headers = $1, updated_at = $2 WHERE account_id = $3 AND name = $4 RETURNING *";
    return this.groups.returning(text, [JSON.stringify(headers), nowMs, accountId, name]).length > 0;
  }
  delete(accountId: string, name: string): boolean {
    // Its endpoints go with it (ON DELETE CASCADE): the copy here forgets them too.
    const ofGroup = (e: EndpointFull) => e.account_id === accountId && e.group_name === name;
    for (const e of this.endpointsTable.where(ofGroup)) this.endpointsTable.recordDeleted(String(e.seq));
    const text = "DELETE FROM url_groups WHERE account_id = $1 AND name = $2 RETURNING *";
    return this.groups.deleting(text, [accountId, name], (g) => g.account_id === accountId && g.name === name) > 0;
  }
  endpoints(accountId: string, group: string): EndpointRow[] {
    return this.endpointsOf(accountId, group).map(({ seq, name, url }) => ({ seq, name, url }));
  }
  addEndpoint(accountId: string, group: string, name: string | undefined, url: string): number {
    const text = "INSERT INTO url_group_endpoints (account_id, group_name, name, url) VALUES ($1, $2, $3, $4) RETURNING *";
    return this.endpointsTable.returning(text, [accountId, group, name ?? null, url])[0]!.seq;
  }
  setEndpointUrl(seq: number, url: string): void {
    this.endpointsTable.returning("UPDATE url_group_endpoints SET url = $1 WHERE seq = $2 RETURNING *", [url, seq]);
  }
  deleteEndpoint(seq: number): void {
    const text = "DELETE FROM url_group_endpoints WHERE seq = $1 RETURNING *";
    this.endpointsTable.deleting(text, [seq], (e) => e.seq === seq);
  }
  deleteAccount(accountId: string): void {
    const ofAccount = (r: { account_id: string }) => r.account_id === accountId;
    for (const e of this.endpointsTable.where(ofAccount)) this.endpointsTable.recordDeleted(String(e.seq));
    this.groups.deleting("DELETE FROM url_groups WHERE account_id = $1 RETURNING *", [accountId], ofAccount);
  }
  private endpointsOf(accountId: string, group: string): EndpointFull[] {
    return this.endpointsTable
      .where((e) => e.account_id === accountId && e.group_name === group)
      .sort((a, b) => a.seq - b.seq);
  }
}
