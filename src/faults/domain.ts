import type { AppContext } from "../context/app-context.ts";
import { apiFaults } from "./api-faults.ts";
import { deliveryFaults } from "./delivery-faults.ts";
import { faultRoutes } from "./routes.ts";
import { FaultRules } from "./rules.ts";
import type { FaultRuleStorage } from "./storage.ts";
import type { WriteTx } from "../store/transactor.ts";

/** Fault injection (docs/test-double.md): the rules, and the hooks the HTTP app and the dispatcher ask. */
export async function createFaultDomain(ctx: AppContext, store: FaultRuleStorage) {
  const rules = await FaultRules.load({ clock: ctx.clock, log: ctx.log, store });
  return {
    rules,
    routes: faultRoutes(ctx, rules),
    intercept: apiFaults({ rules, accounts: ctx.accounts, dialect: ctx.dialect, clock: ctx.clock, log: ctx.log }),
    deliveryFault: deliveryFaults(rules, ctx.log),
    resetPart: {
      name: "faults",
      reset: async (tx: WriteTx, accountId: string) => {
        await rules.clear(tx, accountId);
      },
    },
    /** Another node changed the rules: this one matches against the stored ones. */
    watch: ["fault_rules", () => rules.reload()] as [string, () => Promise<void>],
  };
}
