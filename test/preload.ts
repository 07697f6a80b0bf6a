import { afterAll, beforeAll, setDefaultTimeout } from "bun:test";
import { stopTestPostgres, testPostgres } from "./helpers/postgres.ts";

// The PostgreSQL pass (scripts/test-postgres.ts): every file needs the shared server, so it starts
// here, once, with a limit of its own, instead of inside the first file's 30 s hook (creating and
// starting a cluster on a loaded machine can take that long by itself).
if (process.env.SVC_TEST_ENGINE === "postgres") {
  beforeAll(async () => {
    await testPostgres();
  }, 180_000);
}

// bun test runs no exit hooks: the shared PostgreSQL (if a test started it) stops after the last file.
// Its own limit: hooks get 5 s unless the command line gives one, and a PostgreSQL stopping on a
// loaded machine can take longer.
afterAll(stopTestPostgres, 60_000);

// A bare `bun test` gets the same limit per test as `npm test` (bunfig.toml has no key for it):
// integration tests start servers and wait for real deliveries, which a loaded machine slows.
setDefaultTimeout(30_000);
