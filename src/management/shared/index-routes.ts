import { Elysia } from "elysia";
import type { Account, AccountRegistry } from "../../accounts/accounts.ts";
import { managementAuth } from "../../http/auth.ts";
import type { IndexRowBase } from "./index-store.ts";
import type { IndexService } from "./index-service.ts";
import { actionDone } from "./validate.ts";

/** list, get, create, rename, reset-password, delete under `base` (fidelity.md §6). */
export function indexRoutes<Row extends IndexRowBase>(
  base: string,
  accounts: AccountRegistry,
  service: IndexService<Row> & { create(account: Account, body: unknown): Promise<object> },
) {
  return new Elysia()
    .use(managementAuth(accounts))
    .get(base, ({ account }) => service.list(account))
    .post(base, ({ account, body }) => service.create(account, body))
    .get(`${base}/:id`, ({ account, params }) => service.get(account, params.id))
    .delete(`${base}/:id`, ({ account, params }) => service.remove(account, params.id).then(actionDone))
    .post(`${base}/:id/rename`, ({ account, params, body }) => service.rename(account, params.id, body).then(actionDone))
    .post(`${base}/:id/reset-password`, ({ account, params }) =>
      service.resetPassword(account, params.id).then(actionDone),
    );
}
