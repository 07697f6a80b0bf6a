import type { TestServer } from "./server.ts";

/** A condition over the log entry being inserted (`NEW`), in each engine's SQL. */
export interface EntryCondition {
  sqlite: string;
  postgres: string;
}

/**
 * Makes the INSERT of a log entry that meets `when` fail, and so the transaction of the group
 * commit that writes it (a trigger on the event log, on either engine); returns what stops it.
 */
export async function failCommitsWhen(s: TestServer, when: EntryCondition): Promise<() => Promise<void>> {
  const storage = s.server.storage;
  if (storage.kind === "sqlite") {
    storage.db.run(`CREATE TRIGGER chaos BEFORE INSERT ON events WHEN ${when.sqlite}
      BEGIN SELECT RAISE(ABORT, 'failed by the test'); END`);
    return async () => void storage.db.run("DROP TRIGGER chaos");
  }
  await storage.sql.unsafe(`CREATE OR REPLACE FUNCTION chaos() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF ${when.postgres} THEN RAISE EXCEPTION 'failed by the test'; END IF; RETURN NEW; END $$`);
  await storage.sql.unsafe("CREATE TRIGGER chaos BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION chaos()");
  return async () => void (await storage.sql.unsafe("DROP TRIGGER chaos ON events"));
}

/** One log entry in `oneIn`, at random, fails its transaction. */
export function failSomeCommits(s: TestServer, oneIn: number): Promise<() => Promise<void>> {
  return failCommitsWhen(s, { sqlite: `abs(random()) % ${oneIn} = 0`, postgres: `random() < ${1 / oneIn}` });
}
