import type { Account } from "../accounts/accounts.ts";
import { HeaderPairs } from "../model/columns.ts";
import { jsonColumn } from "../store/json-column.ts";
import { badRequest, notFound, quotaExceeded } from "../core/errors.ts";
import { checkName, parseHttpUrl } from "../messages/options.ts";
import type { GroupResolver } from "../messages/publish.ts";
import { compact, headerMap } from "../messages/views.ts";
import { headerPairs, toHeaders } from "../util/header-pairs.ts";
import type { UrlGroupRow, UrlGroupStorage } from "./storage.ts";

export interface EndpointInput {
  url?: string;
  name?: string;
}


const readDefaults = jsonColumn("url_groups.default_headers", HeaderPairs);
/**
 * URL Groups: named sets of endpoints a publish fans out to. Every method is synchronous and
 * meant to run inside one write transaction (routes wrap it in a group commit). A change starts
 * from the group as stored now (`lock`), whatever another node sharing the storage did to it.
 */
export class UrlGroupService {
  constructor(private readonly store: UrlGroupStorage) {}

  /** The publish seam: a group's endpoints as targets plus its default headers. */
  readonly resolve: GroupResolver = (account, name) => {
    const group = this.store.get(account.id, name);
    if (!group) return undefined;
    const targets = this.store.endpoints(account.id, name).map((e) => ({
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
  addEndpoints(account: Account, groupName: string, endpoints: EndpointInput[], nowMs: number): void {
    checkName(groupName, "URL Group name");
    if (endpoints.length === 0) throw badRequest("invalid endpoints: give at least one endpoint");
    const checked = endpoints.map((e, i) => {
      if (e.url === undefined || e.url === "") throw badRequest(`invalid endpoints[${i}]: url is required`);
      return {
        url: parseHttpUrl(e.url, `endpoints[${i}].url`),
        name: e.name === undefined || e.name === "" ? undefined : checkName(e.name, `endpoints[${i}].name`),
      };
    });
    this.store.lock(account.id, groupName);
    if (!this.store.get(account.id, groupName)) {
      if (this.store.count(account.id) >= account.limits.maxUrlGroups)
        throw quotaExceeded(`too many URL Groups: the plan allows ${account.limits.maxUrlGroups}`);
      this.store.create(account.id, groupName, nowMs);
    }
    const existing = this.store.endpoints(account.id, groupName);
    const named = new Map(existing.filter((x) => x.name !== null).map((x) => [x.name!, x]));
    const unnamed = new Set(existing.filter((x) => x.name === null).map((x) => x.url));
    let count = existing.length;
    for (const e of checked) {
      const same = e.name ? named.get(e.name) : undefined;
      if (same) {
        if (same.url !== e.url) this.store.setEndpointUrl(same.seq, e.url);
        same.url = e.url;
      } else if (e.name || !unnamed.has(e.url)) {
        const seq = this.store.addEndpoint(account.id, groupName, e.name, e.url);
        if (e.name) named.set(e.name, { seq, name: e.name, url: e.url });
        else unnamed.add(e.url);
        count++;
      }
    }
    if (count > account.limits.maxEndpointsPerGroup)
      throw quotaExceeded(`too many endpoints in URL Group "${groupName}": the plan allows ${account.limits.maxEndpointsPerGroup}`);
    this.store.touch(account.id, groupName, nowMs);
  }

  /**
   * Removes every endpoint matching an entry (by name, by URL, or by both when both are given).
   * The group is deleted with its last endpoint.
   */
  removeEndpoints(account: Account, groupName: string, endpoints: EndpointInput[], nowMs: number): void {
    this.store.lock(account.id, groupName);
    this.mustGet(account, groupName);
    endpoints.forEach((e, i) => {
      if (!e.name && !e.url) throw badRequest(`invalid endpoints[${i}]: give name or url`);
    });
    for (const endpoint of this.store.endpoints(account.id, groupName)) {
      const matches = endpoints.some(
        (e) => (!e.name || e.name === endpoint.name) && (!e.url || e.url === endpoint.url || sameUrl(e.url, endpoint.url)),
      );
      if (matches) this.store.deleteEndpoint(endpoint.seq);
    }
    if (this.store.endpoints(account.id, groupName).length === 0) this.store.delete(account.id, groupName);
    else this.store.touch(account.id, groupName, nowMs);
  }

  /** Replaces the group's default headers (an empty object clears them). */
  setDefaultHeaders(account: Account, groupName: string, headers: unknown, nowMs: number): void {
    if (headers === undefined) throw badRequest('invalid body: "headers" is required');
    const pairs = headerPairs(headers, "headers");
    if (!this.store.setDefaults(account.id, groupName, pairs, nowMs)) throw notFound(`URL Group "${groupName}" not found`);
  }

  /** Idempotent: deleting a group that does not exist is not an error (clients delete before they create). */
  delete(account: Account, groupName: string): void {
    this.store.delete(account.id, groupName);
  }

  list(account: Account) {
    return this.store.list(account.id).map((g) => this.view(g));
  }

  get(account: Account, groupName: string) {
    return this.view(this.mustGet(account, groupName));
  }

  private mustGet(account: Account, groupName: string): UrlGroupRow {
    const group = this.store.get(account.id, groupName);
    if (!group) throw notFound(`URL Group "${groupName}" not found`);
    return group;
  }

  private view(g: UrlGroupRow) {
    const defaults = readDefaults(g.default_headers);
    return compact({
      name: g.name,
      createdAt: g.created_at,
      updatedAt: g.updated_at,
      endpoints: this.store.endpoints(g.account_id, g.name).map((e) => compact({ name: e.name ?? undefined, url: e.url })),
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
