import type { Static, TSchema } from "@sinclair/typebox";
import { checkShape } from "../core/validation.ts";
import { ConfigError } from "./config.ts";

/**
 * Turns a bad config fixture into a ConfigError naming it, e.g.
 * `--config: svcd.json: accounts[0].schedules[1].cron: ...`.
 */
export class FixtureChecker {
  /** `source`: the config file's path, when there is one. */
  constructor(private readonly source: string | null) {}

  fail(path: string, message: string): never {
    throw new ConfigError("--config", `${this.source ? `${this.source}: ` : ""}${path}: ${message}`);
  }

  /** Checks a fixture's shape; the error names the first offending field. */
  shape<S extends TSchema>(schema: S, value: unknown, path: string): Static<S> {
    return checkShape(schema, value, path, (problem) => {
      throw new ConfigError("--config", `${this.source ? `${this.source}: ` : ""}${problem}`);
    });
  }

  /** Runs a domain check (which throws HTTP errors for API callers) on behalf of a fixture. */
  attempt<T>(path: string, fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      return this.fail(path, (error as Error).message);
    }
  }

  /** `attempt` for a domain change that runs inside a write (it awaits its stores). */
  async attemptAsync<T>(path: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      return this.fail(path, (error as Error).message);
    }
  }
}
