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

interface Entry {
  rule: FaultRule;
  draw: () => number;
}

/** At most this many rules per account: a runaway script should get an error, not a slow server. */
const MAX_RULES = 100;

/**
 * The fault rules of every account, in this process's memory: a rule is a test's setting, like the
 * manual clock, and several nodes sharing one database each keep their own (reset clears them).
 * Rules are tried in the order they were created; the first that fires on a match applies, and the
 * rules after it do not see that match.
 */
export class FaultRules {
  private readonly byAccount = new Map<string, Entry[]>();
  private readonly injectedByKind = new Map<FaultKind, number>();

  constructor(private readonly deps: { clock: Clock; log: Logger }) {}

  add(accountId: string, input: FaultRuleInput): FaultRule {
    const problem = ruleProblem(input);
    if (problem) throw badRequest(problem);
    const entries = this.byAccount.get(accountId) ?? [];
    if (entries.length >= MAX_RULES) throw badRequest(`too many fault rules: at most ${MAX_RULES}`);
    const seed = input.seed ?? Math.floor(Math.random() * 2 ** 32);
    const id = "fault_" + randomBase58(16);
    const rule: FaultRule = { ...input, id, createdAt: this.deps.clock.now(), seed, matched: 0, fired: 0 };
    entries.push({ rule, draw: seededRandom(seed) });
    this.byAccount.set(accountId, entries);
    return { ...rule };
  }

  /** No account has a rule: requests and deliveries skip matching altogether. */
  get empty(): boolean {
    for (const entries of this.byAccount.values()) if (entries.length > 0) return false;
    return true;
  }

  list(accountId: string): FaultRule[] {
    return (this.byAccount.get(accountId) ?? []).map((e) => ({ ...e.rule }));
  }

  remove(accountId: string, id: string): void {
    const entries = this.byAccount.get(accountId) ?? [];
    const at = entries.findIndex((e) => e.rule.id === id);
    if (at < 0) throw notFound(`fault rule ${id} not found`);
    entries.splice(at, 1);
  }

  /** Forgets every rule of the account; returns how many there were. */
  clear(accountId: string): number {
    const n = this.byAccount.get(accountId)?.length ?? 0;
    this.byAccount.delete(accountId);
    return n;
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
