import type { Static, TSchema } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import type { Account, AccountRegistry } from "../../accounts/accounts.ts";
import { managementAuth } from "../../http/auth.ts";
import type { IndexRowBase } from "./storage.ts";
import { RenameIndex, type IndexService } from "./index-service.ts";
import { actionDone } from "./validate.ts";
import { Type } from "@sinclair/typebox";
import { apiDoc, jsonContent } from "../../openapi/doc.ts";
import { OkJson } from "./api-schemas.ts";

const IdParams = t.Object({ id: t.String() });

/** list, get, create, rename, reset-password, delete under `base` (docs/management-api.md). */
export function indexRoutes<Row extends IndexRowBase, Create extends TSchema>(
  base: string,
  accounts: AccountRegistry,
  service: IndexService<Row> & { create(account: Account, input: Static<Create>): Promise<object> },
  createBody: Create,
  /** What one index looks like in the answers. */
  indexJson: TSchema,
) {
  const one = (description: string) => ({ 200: jsonContent(indexJson, description) });
  const ok = (description: string) => ({ 200: jsonContent(OkJson, description) });
  return new Elysia()
    .use(managementAuth(accounts))
    .get(base, ({ account }) => service.list(account), {
      detail: apiDoc({ summary: "List indexes", responses: { 200: jsonContent(Type.Array(indexJson), "every index") } }),
    })
    .post(base, ({ account, body }) => service.create(account, body as Static<Create>), {
      body: createBody,
      detail: apiDoc({ summary: "Create an index", responses: one("the new index") }),
    })
    .get(`${base}/:id`, ({ account, params }) => service.get(account, params.id), {
      params: IdParams,
      detail: apiDoc({ summary: "Get an index", responses: one("the index") }),
    })
    .delete(`${base}/:id`, ({ account, params }) => service.remove(account, params.id).then(actionDone), {
      params: IdParams,
      detail: apiDoc({ summary: "Delete an index", responses: ok("deleted") }),
    })
    .post(`${base}/:id/rename`, ({ account, params, body }) => service.rename(account, params.id, body.name).then(actionDone), {
      params: IdParams,
      body: RenameIndex,
      detail: apiDoc({ summary: "Rename an index", responses: ok("renamed") }),
    })
    .post(`${base}/:id/reset-password`, ({ account, params }) => service.resetPassword(account, params.id).then(actionDone), {
      params: IdParams,
      detail: apiDoc({ summary: "Issue new tokens for an index", responses: ok("new tokens issued") }),
    });
}
