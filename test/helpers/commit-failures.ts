import type { TestServer } from "./server.ts";

/**
 * Makes one log entry in `oneIn` fail its INSERT, and so the transaction of the group commit that
 * writes it (a trigger on the event log, on either engine); returns what stops it.
 */
export async function failSomeCommits(s: TestServer, oneIn: number): Promise<() => Promise<void>> {
  const storage = s.server.storage;
  if (storage.kind === "sqlite") {
    storage.db.run(`CREATE TRIGGER chaos BEFORE INSERT ON events WHEN abs(random()) % ${oneIn} = 0
      BEGIN SELECT RAISE(ABORT, 'failed by the test'); END`);
    return async () => void storage.db.run("DROP TRIGGER chaos");
  }
  await storage.sql.unsafe(`CREATE OR REPLACE FUNCTION chaos() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF random() < ${1 / oneIn} THEN RAISE EXCEPTION 'failed by the test'; END IF; RETURN NEW; END $$`);
  await storage.sql.unsafe("CREATE TRIGGER chaos BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION chaos()");
  return async () => void (await storage.sql.unsafe("DROP TRIGGER chaos ON events"));
}
