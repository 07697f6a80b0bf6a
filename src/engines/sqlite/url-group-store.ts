import type { Database } from "bun:sqlite";
import type { WriteTx } from "../../store/transactor.ts";
import type { EndpointRow, UrlGroupRow, UrlGroupStorage } from "../../url-groups/storage.ts";

/** URL Groups and their endpoints; every statement is scoped to one account. */
export class SqliteUrlGroupStore implements UrlGroupStorage {
  private readonly getStmt;
  private readonly listStmt;
  private readonly countStmt;
  private readonly insertStmt;
  private readonly touchStmt;
  private readonly setDefaultsStmt;
  private readonly deleteStmt;
  private readonly endpointsStmt;
  private readonly addEndpointStmt;
  private readonly setEndpointUrlStmt;
  private readonly deleteEndpointStmt;
  private readonly deleteAccountStmt;

  constructor(db: Database) {
    this.getStmt = db.prepare<UrlGroupRow, [string, string]>("SELECT * FROM url_groups WHERE account_id = ? AND name = ?");
    this.listStmt = db.prepare<UrlGroupRow, [string]>("SELECT * FROM url_groups WHERE account_id = ? ORDER BY name");
    this.countStmt = db.prepare<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM url_groups WHERE account_id = ?");
    this.insertStmt = db.prepare(
      "INSERT INTO url_groups (account_id, name, created_at, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
    );
    this.touchStmt = db.prepare("UPDATE url_groups SET updated_at = ? WHERE account_id = ? AND name = ?");
    this.setDefaultsStmt = db.prepare(
      "UPDATE url_groups SET default_headers = ?, updated_at = ? WHERE account_id = ? AND name = ?",
    );
    this.deleteStmt = db.prepare("DELETE FROM url_groups WHERE account_id = ? AND name = ?");
    this.endpointsStmt = db.prepare<EndpointRow, [string, string]>(
      "SELECT seq, name, url FROM url_group_endpoints WHERE account_id = ? AND group_name = ? ORDER BY seq",
    );
    this.addEndpointStmt = db.prepare(
      "INSERT INTO url_group_endpoints (account_id, group_name, name, url) VALUES (?, ?, ?, ?)",
    );
    this.setEndpointUrlStmt = db.prepare("UPDATE url_group_endpoints SET url = ? WHERE seq = ?");
    this.deleteEndpointStmt = db.prepare("DELETE FROM url_group_endpoints WHERE seq = ?");
    this.deleteAccountStmt = db.prepare("DELETE FROM url_groups WHERE account_id = ?");
  }

  async get(_tx: WriteTx | null, accountId: string, name: string): Promise<UrlGroupRow | undefined> {
    return this.getStmt.get(accountId, name) ?? undefined;
  }
  async list(accountId: string): Promise<UrlGroupRow[]> {
    return this.listStmt.all(accountId);
  }
  async count(_tx: WriteTx, accountId: string): Promise<number> {
    return this.countStmt.get(accountId)?.n ?? 0;
  }
  /** One process writes SQLite: what it reads inside a write is the truth already. */
  async lock(): Promise<void> {}
  async create(_tx: WriteTx, accountId: string, name: string, nowMs: number): Promise<void> {
    this.insertStmt.run(accountId, name, nowMs, nowMs);
  }
  async touch(_tx: WriteTx, accountId: string, name: string, nowMs: number): Promise<void> {
    this.touchStmt.run(nowMs, accountId, name);
  }
  async setDefaults(_tx: WriteTx, accountId: string, name: string, headers: Array<[string, string]>, nowMs: number) {
    return this.setDefaultsStmt.run(JSON.stringify(headers), nowMs, accountId, name).changes > 0;
  }
  /** Deletes the group and (cascade) its endpoints. */
  async delete(_tx: WriteTx, accountId: string, name: string): Promise<boolean> {
    return this.deleteStmt.run(accountId, name).changes > 0;
  }
  async endpoints(_tx: WriteTx | null, accountId: string, group: string): Promise<EndpointRow[]> {
    return this.endpointsStmt.all(accountId, group);
  }
  /** Returns the new endpoint's seq. */
  async addEndpoint(_tx: WriteTx, accountId: string, group: string, name: string | undefined, url: string) {
    return Number(this.addEndpointStmt.run(accountId, group, name ?? null, url).lastInsertRowid);
  }
  async setEndpointUrl(_tx: WriteTx, seq: number, url: string): Promise<void> {
    this.setEndpointUrlStmt.run(url, seq);
  }
  async deleteEndpoint(_tx: WriteTx, seq: number): Promise<void> {
    this.deleteEndpointStmt.run(seq);
  }
  async deleteAccount(_tx: WriteTx, accountId: string): Promise<void> {
    this.deleteAccountStmt.run(accountId);
  }
}
