import type { Clock } from "../core/clock.ts";
import { notFound, badRequest } from "../core/errors.ts";
import { randomBase58 } from "../core/ids.ts";
import type { Logger } from "../core/log.ts";
import {
  isDeliveryKind,
  ruleProblem,
  type ApiFacts,
  type DeliveryFacts,
  type FaultKind,
  type FaultRule,
  type FaultRuleInput,
} from "./model.ts";
import { seededRandom } from "./random.ts";
import { byCreation, type FaultRuleRow, type FaultRuleStorage } from "./storage.ts";
import type { WriteTx } from "../store/transactor.ts";

interface Entry {
  rule: FaultRule;
  draw: () => number;
}

/** At most this many rules per account: a runaway script should get an error, not a slow server. */
const MAX_RULES = 100;

export interface FaultRulesDeps {
  clock: Clock;
  log: Logger;
  /** Rules are added and removed in writes: stored (and, on a shared storage, told to the other nodes) before the answer. */
  store: FaultRuleStorage;
}

/**
 * The fault rules of every account, kept in the storage: a rule set through any node sharing it
 * acts on the requests and deliveries of every node. Each process matches against its copy of the
 * committed rules (`reload` when another node changed them) and counts its own matches: `times`,
 * `every`, `matched` and `fired` count what this process saw. Rules are tried in the order they
 * were created; the first that fires on a match applies, and the rules after it do not see that match.
 */
export class FaultRules {
  private byAccount = new Map<string, Entry[]>();
  private readonly injectedByKind = new Map<FaultKind, number>();

  private constructor(private readonly deps: FaultRulesDeps) {}

  /** The rules stored now (at start). */
  static async load(deps: FaultRulesDeps): Promise<FaultRules> {
    const rules = new FaultRules(deps);
    await rules.reload();
    return rules;
  }

  /** Takes the stored rules; a rule kept keeps its counters and its generator's place. */
  async reload(): Promise<void> {
    this.take(await this.deps.store.all(null));
  }

  private take(rows: FaultRuleRow[]): void {
    const known = new Map([...this.byAccount.values()].flat().map((e) => [e.rule.id, e]));
    const next = new Map<string, Entry[]>();
    for (const row of rows.sort(byCreation)) {
      const entry = known.get(row.id) ?? entryOf(row);
      (next.get(row.account_id) ?? next.set(row.account_id, []).get(row.account_id)!).push(entry);
    }
    this.byAccount = next;
  }

  /** Inside a write: stores a new rule of the account; this process applies it once committed. */
  async add(tx: WriteTx, accountId: string, input: FaultRuleInput): Promise<FaultRule> {
    const problem = ruleProblem(input);
    if (problem) throw badRequest(problem);
    if ((this.byAccount.get(accountId)?.length ?? 0) >= MAX_RULES) throw badRequest(`too many fault rules: at most ${MAX_RULES}`);
    const seed = input.seed ?? Math.floor(Math.random() * 2 ** 32);
    const id = "fault_" + randomBase58(16);
    const createdAt = this.deps.clock.now();
    const definition = JSON.stringify({ ...input, seed });
    await this.deps.store.insert(tx, { id, account_id: accountId, created_at: createdAt, definition });
    await this.reloadOnCommit(tx);
    return { ...input, id, createdAt, seed, matched: 0, fired: 0 };
  }

  /** No account has a rule: requests and deliveries skip matching altogether. */
  get empty(): boolean {
    return this.byAccount.size === 0;
  }

  list(accountId: string): FaultRule[] {
    return (this.byAccount.get(accountId) ?? []).map((e) => ({ ...e.rule }));
  }

  /** Inside a write: 404 when the account has no such rule. */
  async remove(tx: WriteTx, accountId: string, id: string): Promise<void> {
    if (!(await this.deps.store.delete(tx, accountId, id))) throw notFound(`fault rule ${id} not found`);
    await this.reloadOnCommit(tx);
  }

  /** Inside a write: forgets every rule of the account; returns how many there were. */
  async clear(tx: WriteTx, accountId: string): Promise<number> {
    const n = await this.deps.store.deleteAccount(tx, accountId);
    await this.reloadOnCommit(tx);
    return n;
  }

  /** The rules as the write leaves them: this process applies them right after the commit that stores them. */
  private async reloadOnCommit(tx: WriteTx): Promise<void> {
    const rows = await this.deps.store.all(tx);
    tx.afterCommit((committed) => committed && this.take(rows));
  }

  /** The delivery fault to inject into this attempt, if a rule fires. */
  forDelivery(accountId: string, facts: DeliveryFacts): FaultRule | undefined {
    return this.fire(accountId, (r) => isDeliveryKind(r.kind) && matchesDelivery(r, facts));
  }

  /** The API fault to answer this request with, if a rule fires. */
  forRequest(accountId: string, facts: ApiFacts): FaultRule | undefined {
    return this.fire(accountId, (r) => !isDeliveryKind(r.kind) && matchesRequest(r, facts));
  }

  /** Faults injected since the start, by kind (`svcd_faults_injected_total`). */
  injectedCounts(): Array<[FaultKind, number]> {
    return [...this.injectedByKind];
  }

  private fire(accountId: string, matches: (r: FaultRule) => boolean): FaultRule | undefined {
    const entries = this.byAccount.get(accountId);
    if (!entries) return undefined;
    for (const { rule, draw } of entries) {
      if (!matches(rule)) continue;
      if (rule.times !== undefined && rule.fired >= rule.times) continue;
      rule.matched++;
      const fires =
        rule.probability !== undefined ? draw() < rule.probability : rule.every !== undefined ? rule.matched % rule.every === 0 : true;
      if (!fires) continue;
      rule.fired++;
      this.injectedByKind.set(rule.kind, (this.injectedByKind.get(rule.kind) ?? 0) + 1);
      return { ...rule };
    }
    return undefined;
  }
}

function entryOf(row: FaultRuleRow): Entry {
  const input = JSON.parse(row.definition) as FaultRuleInput & { seed: number };
  const rule: FaultRule = { ...input, id: row.id, createdAt: row.created_at, matched: 0, fired: 0 };
  return { rule, draw: seededRandom(input.seed) };
}

function matchesDelivery(rule: FaultRule, facts: DeliveryFacts): boolean {
  const m = rule.match ?? {};
  if (m.url !== undefined && !facts.url.startsWith(m.url)) return false;
  if (m.label !== undefined && !(facts.labels ?? []).includes(m.label)) return false;
  if (m.flowControlKey !== undefined && facts.flowControlKey !== m.flowControlKey) return false;
  if (m.queue !== undefined && facts.queue !== m.queue) return false;
  return true;
}

function matchesRequest(rule: FaultRule, facts: ApiFacts): boolean {
  const m = rule.match ?? {};
  if (m.route !== undefined && !facts.path.startsWith(m.route)) return false;
  if (m.method !== undefined && m.method.toUpperCase() !== facts.method.toUpperCase()) return false;
  return true;
}
