import type { Account } from "../accounts/accounts.ts";
import { HeaderPairs } from "../model/columns.ts";
import { jsonColumn } from "../store/json-column.ts";
import { badRequest, notFound, quotaExceeded } from "../core/errors.ts";
import { checkName, parseHttpUrl } from "../messages/options.ts";
import type { GroupResolver } from "../messages/publish.ts";
import { compact, headerMap } from "../messages/views.ts";
import { headerPairs, toHeaders } from "../util/header-pairs.ts";
import type { WriteTx } from "../store/transactor.ts";
import type { UrlGroupRow, UrlGroupStorage } from "./storage.ts";

export interface EndpointInput {
  url?: string;
  name?: string;
}


const readDefaults = jsonColumn("url_groups.default_headers", HeaderPairs);
/**
 * URL Groups: named sets of endpoints a publish fans out to. Changes run inside a write (`tx`;
 * routes wrap each in a group commit) and start from the group as stored now (`lock`), whatever
 * another node sharing the storage did to it; views read outside writes.
 */
export class UrlGroupService {
  constructor(private readonly store: UrlGroupStorage) {}

  /** The publish seam: a group's endpoints as targets plus its default headers. */
  readonly resolve: GroupResolver = async (tx, account, name) => {
    const group = await this.store.get(tx, account.id, name);
    if (!group) return undefined;
    const targets = (await this.store.endpoints(tx, account.id, name)).map((e) => ({
      url: e.url,
      topicName: name,
      endpointName: e.name ?? undefined,
    }));
    return { targets, defaults: toHeaders(readDefaults(group.default_headers)) };
  };

  /**
   * Creates the group if needed and adds the endpoints. A named endpoint is identified by its name
   * (adding it again changes its URL); an unnamed one by its URL (adding it again changes nothing).
   */
  async addEndpoints(tx: WriteTx, account: Account, groupName: string, endpoints: EndpointInput[], nowMs: number) {
    checkName(groupName, "URL Group name");
    if (endpoints.length === 0) throw badRequest("invalid endpoints: give at least one endpoint");
    const checked = endpoints.map((e, i) => {
      if (e.url === undefined || e.url === "") throw badRequest(`invalid endpoints[${i}]: url is required`);
      return {
        url: parseHttpUrl(e.url, `endpoints[${i}].url`),
        name: e.name === undefined || e.name === "" ? undefined : checkName(e.name, `endpoints[${i}].name`),
      };
    });
    await this.store.lock(tx, account.id, groupName);
    if (!(await this.store.get(tx, account.id, groupName))) {
      if ((await this.store.count(tx, account.id)) >= account.limits.maxUrlGroups)
        throw quotaExceeded(`too many URL Groups: the plan allows ${account.limits.maxUrlGroups}`);
      await this.store.create(tx, account.id, groupName, nowMs);
    }
    const existing = await this.store.endpoints(tx, account.id, groupName);
    const named = new Map(existing.filter((x) => x.name !== null).map((x) => [x.name!, x]));
    const unnamed = new Set(existing.filter((x) => x.name === null).map((x) => x.url));
    let count = existing.length;
    for (const e of checked) {
      const same = e.name ? named.get(e.name) : undefined;
      if (same) {
        if (same.url !== e.url) await this.store.setEndpointUrl(tx, same.seq, e.url);
        same.url = e.url;
      } else if (e.name || !unnamed.has(e.url)) {
        const seq = await this.store.addEndpoint(tx, account.id, groupName, e.name, e.url);
        if (e.name) named.set(e.name, { seq, name: e.name, url: e.url });
        else unnamed.add(e.url);
        count++;
      }
    }
    if (count > account.limits.maxEndpointsPerGroup)
      throw quotaExceeded(`too many endpoints in URL Group "${groupName}": the plan allows ${account.limits.maxEndpointsPerGroup}`);
    await this.store.touch(tx, account.id, groupName, nowMs);
  }

  /**
   * Removes every endpoint matching an entry (by name, by URL, or by both when both are given).
   * The group is deleted with its last endpoint.
   */
  async removeEndpoints(tx: WriteTx, account: Account, groupName: string, endpoints: EndpointInput[], nowMs: number) {
    await this.store.lock(tx, account.id, groupName);
    await this.mustGet(tx, account, groupName);
    endpoints.forEach((e, i) => {
      if (!e.name && !e.url) throw badRequest(`invalid endpoints[${i}]: give name or url`);
    });
    for (const endpoint of await this.store.endpoints(tx, account.id, groupName)) {
      const matches = endpoints.some(
        (e) => (!e.name || e.name === endpoint.name) && (!e.url || e.url === endpoint.url || sameUrl(e.url, endpoint.url)),
      );
      if (matches) await this.store.deleteEndpoint(tx, endpoint.seq);
    }
    const left = await this.store.endpoints(tx, account.id, groupName);
    if (left.length === 0) await this.store.delete(tx, account.id, groupName);
    else await this.store.touch(tx, account.id, groupName, nowMs);
  }

  /** Replaces the group's default headers (an empty object clears them). */
  async setDefaultHeaders(tx: WriteTx, account: Account, groupName: string, headers: unknown, nowMs: number) {
    if (headers === undefined) throw badRequest('invalid body: "headers" is required');
    const pairs = headerPairs(headers, "headers");
    const found = await this.store.setDefaults(tx, account.id, groupName, pairs, nowMs);
    if (!found) throw notFound(`URL Group "${groupName}" not found`);
  }

  /** Idempotent: deleting a group that does not exist is not an error (clients delete before they create). */
  async delete(tx: WriteTx, account: Account, groupName: string): Promise<void> {
    await this.store.delete(tx, account.id, groupName);
  }

  async list(account: Account) {
    return Promise.all((await this.store.list(account.id)).map((g) => this.view(g)));
  }

  async get(account: Account, groupName: string) {
    return this.view(await this.mustGet(null, account, groupName));
  }

  private async mustGet(tx: WriteTx | null, account: Account, groupName: string): Promise<UrlGroupRow> {
    const group = await this.store.get(tx, account.id, groupName);
    if (!group) throw notFound(`URL Group "${groupName}" not found`);
    return group;
  }

  private async view(g: UrlGroupRow) {
    const defaults = readDefaults(g.default_headers);
    const endpoints = await this.store.endpoints(null, g.account_id, g.name);
    return compact({
      name: g.name,
      createdAt: g.created_at,
      updatedAt: g.updated_at,
      endpoints: endpoints.map((e) => compact({ name: e.name ?? undefined, url: e.url })),
      headers: defaults.length > 0 ? headerMap(defaults) : undefined,
    });
  }
}

/** Two spellings of one URL (`https://a.example` and `https://a.example/`) compare equal. */
function sameUrl(given: string, stored: string): boolean {
  try {
    return new URL(given).href === new URL(stored).href;
  } catch {
    return false;
  }
}
