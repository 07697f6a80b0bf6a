import type { EndpointRow, UrlGroupRow, UrlGroupStorage } from "../../url-groups/storage.ts";
import type { CachedTable } from "./cached-table.ts";
import type { TickScope } from "./tick.ts";
import { num } from "./values.ts";

export type EndpointFull = EndpointRow & { account_id: string; group_name: string };
type Raw = Record<string, unknown>;

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** URL Groups and their endpoints, kept in memory on every node. */
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
  insert(accountId: string, name: string, nowMs: number): void {
    this.groups.put({ account_id: accountId, name, created_at: nowMs, updated_at: nowMs, default_headers: "[]" });
  }
  touch(accountId: string, name: string, nowMs: number): void {
    const g = this.get(accountId, name);
    if (g) this.groups.put({ ...g, updated_at: nowMs });
  }
  setDefaults(accountId: string, name: string, headers: Array<[string, string]>, nowMs: number): void {
    const g = this.get(accountId, name);
    if (g) this.groups.put({ ...g, default_headers: JSON.stringify(headers), updated_at: nowMs });
  }
  delete(accountId: string, name: string): boolean {
    for (const e of this.endpointsOf(accountId, name)) this.endpointsTable.remove(String(e.seq));
    return this.groups.remove(this.key(accountId, name));
  }
  endpoints(accountId: string, group: string): EndpointRow[] {
    return this.endpointsOf(accountId, group).map(({ seq, name, url }) => ({ seq, name, url }));
  }
  /** Numbered by the column's sequence, as SQLite's AUTOINCREMENT does: the order they were added, on every node. */
  addEndpoint(accountId: string, group: string, name: string | undefined, url: string): number {
    const [row] = this.scope.tx.query("SELECT nextval(pg_get_serial_sequence('url_group_endpoints', 'seq')) AS seq");
    const seq = num(row!.seq);
    this.endpointsTable.put({ seq, account_id: accountId, group_name: group, name: name ?? null, url });
    return seq;
  }
  setEndpointUrl(seq: number, url: string): void {
    const e = this.endpointsTable.get(String(seq));
    if (e) this.endpointsTable.put({ ...e, url });
  }
  deleteEndpoint(seq: number): void {
    this.endpointsTable.remove(String(seq));
  }
  deleteAccount(accountId: string): void {
    for (const g of this.list(accountId)) this.delete(accountId, g.name);
  }
  private endpointsOf(accountId: string, group: string): EndpointFull[] {
    return this.endpointsTable
      .where((e) => e.account_id === accountId && e.group_name === group)
      .sort((a, b) => a.seq - b.seq);
  }
}
