import type { Migration } from "../store/db.ts";

export const flowControlMigrations: Migration[] = [
  {
    id: "flow-control/001-index",
    sql: `-- the keys of an account, and a key's held messages in publish order
    CREATE INDEX messages_flow ON messages (account_id, flow_key, state) WHERE flow_key IS NOT NULL;
    -- held messages are released at start (their lane counters lived in memory)
    CREATE INDEX messages_held ON messages (state) WHERE state = 'HELD';`,
  },
];
