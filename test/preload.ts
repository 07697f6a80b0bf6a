import { afterAll } from "bun:test";
import { stopTestPostgres } from "./helpers/postgres.ts";

// bun test runs no exit hooks: the shared PostgreSQL (if a test started it) stops after the last file.
afterAll(stopTestPostgres);
