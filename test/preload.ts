import { afterAll, setDefaultTimeout } from "bun:test";
import { stopTestPostgres } from "./helpers/postgres.ts";

// bun test runs no exit hooks: the shared PostgreSQL (if a test started it) stops after the last file.
// Its own limit: hooks get 5 s unless the command line gives one, and a PostgreSQL stopping on a
// loaded machine can take longer.
afterAll(stopTestPostgres, 60_000);

// A bare `bun test` gets the same limit per test as `npm test` (bunfig.toml has no key for it):
// integration tests start servers and wait for real deliveries, which a loaded machine slows.
setDefaultTimeout(30_000);
