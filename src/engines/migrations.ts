import { accountMigrations } from "../accounts/schema.ts";
import { dlqMigrations } from "../dlq/schema.ts";
import { logMigrations } from "../logs/schema.ts";
import { searchMigrations } from "../management/search/schema.ts";
import { vectorMigrations } from "../management/vector/schema.ts";
import { bodyMigrations, messageMigrations } from "../messages/schema.ts";
import { metricsMigrations } from "../metrics/schema.ts";
import { dedupMigrations } from "../dedup/schema.ts";
import { faultMigrations } from "../faults/schema.ts";
import { flowControlMigrations } from "../flow-control/schema.ts";
import { queueMigrations } from "../queues/schema.ts";
import { scheduleMigrations } from "../schedules/schema.ts";
import { urlGroupMigrations } from "../url-groups/schema.ts";
import { workflowMigrations } from "../workflows/schema.ts";
import type { Migration } from "../store/migration.ts";

/**
 * Every domain's migrations, in the order they are applied. Ids are namespaced per domain, so a
 * new domain adds its list here without renumbering anyone else's.
 */
export const MIGRATIONS: readonly Migration[] = [
  ...accountMigrations,
  ...bodyMigrations,
  ...messageMigrations,
  ...logMigrations,
  ...dlqMigrations,
  ...metricsMigrations,
  ...searchMigrations,
  ...vectorMigrations,
  ...urlGroupMigrations,
  ...dedupMigrations,
  ...queueMigrations,
  ...flowControlMigrations,
  ...scheduleMigrations,
  ...workflowMigrations,
  ...faultMigrations,
];
