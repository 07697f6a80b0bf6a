import type { Static, TSchema } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import type { Account, AccountRegistry } from "../../accounts/accounts.ts";
import { managementAuth } from "../../http/auth.ts";
import type { IndexRowBase } from "./index-store.ts";
import { RenameIndex, type IndexService } from "./index-service.ts";
import { actionDone } from "./validate.ts";

const IdParams = t.Object({ id: t.String() });

/** list, get, create, rename, reset-password, delete under `base` (fidelity.md §6). */
export function indexRoutes<Row extends IndexRowBase, Create extends TSchema>(
  base: string,
  accounts: AccountRegistry,
  service: IndexService<Row> & { create(account: Account, input: Static<Create>): Promise<object> },
  createBody: Create,
) {
  return new Elysia()
    .use(managementAuth(accounts))
    .get(base, ({ account }) => service.list(account), { detail: { summary: "List indexes" } })
    .post(base, ({ account, body }) => service.create(account, body as Static<Create>), {
      body: createBody,
      detail: { summary: "Create an index" },
    })
    .get(`${base}/:id`, ({ account, params }) => service.get(account, params.id), {
      params: IdParams,
      detail: { summary: "Get an index" },
    })
    .delete(`${base}/:id`, ({ account, params }) => service.remove(account, params.id).then(actionDone), {
      params: IdParams,
      detail: { summary: "Delete an index" },
    })
    .post(`${base}/:id/rename`, ({ account, params, body }) => service.rename(account, params.id, body.name).then(actionDone), {
      params: IdParams,
      body: RenameIndex,
      detail: { summary: "Rename an index" },
    })
    .post(`${base}/:id/reset-password`, ({ account, params }) => service.resetPassword(account, params.id).then(actionDone), {
      params: IdParams,
      detail: { summary: "Issue new tokens for an index" },
    });
}
