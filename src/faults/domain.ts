import type { AppContext } from "../context/app-context.ts";
import { apiFaults } from "./api-faults.ts";
import { deliveryFaults } from "./delivery-faults.ts";
import { faultRoutes } from "./routes.ts";
import { FaultRules } from "./rules.ts";
import type { FaultRuleStorage } from "./storage.ts";

/** Fault injection (docs/test-double.md): the rules, and the hooks the HTTP app and the dispatcher ask. */
export function createFaultDomain(ctx: AppContext, store: FaultRuleStorage) {
  const rules = new FaultRules({ clock: ctx.clock, log: ctx.log, store, commit: ctx.commit });
  return {
    rules,
    routes: faultRoutes(ctx, rules),
    intercept: apiFaults({ rules, accounts: ctx.accounts, dialect: ctx.dialect, clock: ctx.clock, log: ctx.log }),
    deliveryFault: deliveryFaults(rules, ctx.log),
    resetPart: { name: "faults", reset: (accountId: string) => void rules.clear(accountId) },
    /** Another node changed the rules: this one matches against the stored ones. */
    watch: ["fault_rules", () => rules.reload()] as [string, () => void],
  };
}
