import type { AccountRegistry } from "../../accounts/accounts.ts";
import { indexRoutes } from "../shared/index-routes.ts";
import { CreateSearchIndex, type SearchIndexes } from "./logic.ts";
import { SearchIndexJson } from "../shared/api-schemas.ts";

/** `/v2/search` and `/v2/search/{id}[/rename|/reset-password]`. */
export const searchRoutes = (accounts: AccountRegistry, indexes: SearchIndexes) =>
  indexRoutes("/v2/search", accounts, indexes, CreateSearchIndex, SearchIndexJson);
