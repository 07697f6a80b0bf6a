import type { Clock } from "../../core/clock.ts";
import type { Dialect } from "../../core/dialect.ts";
import type { Transactor } from "../../store/transactor.ts";

/** The slice of the app context that management logic uses (never an Elysia context). */
export interface ManagementDeps {
  clock: Clock;
  commit: Transactor;
  dialect: Dialect;
}
