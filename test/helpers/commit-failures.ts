import type { TestServer } from "./server.ts";

/** A condition over the log entry being inserted (`NEW`): one SQL text for both engines, or one each. */
export type EntryCondition = string | { sqlite: string; postgres: string };

/** One log entry in `oneIn`, at random. */
export const oneIn = (n: number): EntryCondition => ({ sqlite: `abs(random()) % ${n} = 0`, postgres: `random() < ${1 / n}` });

/**
 * One log entry in `n` at random, and always the CREATED entry of a message to a URL holding
 * `/refused/`: a write refused at random may go through when it runs again (SQLite reruns a refused
 * tick one write at a time), so only the second part makes sure some publishes are refused.
 */
export const oneInAndRefusedPaths = (n: number): EntryCondition => {
  const always = "(NEW.state = 'CREATED' AND NEW.url LIKE '%/refused/%')";
  const random = oneIn(n) as { sqlite: string; postgres: string };
  return { sqlite: `${always} OR ${random.sqlite}`, postgres: `${always} OR ${random.postgres}` };
};

/**
 * Runs `work` while the INSERT of every log entry that meets `when` fails, and so the transaction
 * of the group commit that writes it (a trigger on the event log, on either engine); the trigger
 * is gone once `work` settles.
 */
export async function whileCommitsFail<T>(s: TestServer, when: EntryCondition, work: () => Promise<T>): Promise<T> {
  const stop = await failCommitsWhen(s, when);
  try {
    return await work();
  } finally {
    await stop();
  }
}

async function failCommitsWhen(s: TestServer, when: EntryCondition): Promise<() => Promise<void>> {
  const storage = s.server.storage;
  const condition = typeof when === "string" ? { sqlite: when, postgres: when } : when;
  if (storage.kind === "sqlite") {
    storage.db.run(`CREATE TRIGGER chaos BEFORE INSERT ON events WHEN ${condition.sqlite}
      BEGIN SELECT RAISE(ABORT, 'failed by the test'); END`);
    return async () => void storage.db.run("DROP TRIGGER chaos");
  }
  await storage.sql.unsafe(`CREATE OR REPLACE FUNCTION chaos() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF ${condition.postgres} THEN RAISE EXCEPTION 'failed by the test'; END IF; RETURN NEW; END $$`);
  await storage.sql.unsafe("CREATE TRIGGER chaos BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION chaos()");
  return async () => void (await storage.sql.unsafe("DROP TRIGGER chaos ON events"));
}
