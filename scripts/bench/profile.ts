/**
 * A CPU profile of svcd's main thread under one load, for the "where the time goes" notes:
 *
 *   bun scripts/bench/profile.ts [publish|delivering|delivery|e2e] [seconds or messages] [--root <checkout>]
 *       [--engine postgres]
 *
 * Starts svcd under `bun --cpu-prof`, runs the load (scripts/bench/load.ts's generator), stops it
 * with SIGTERM (the profile is written on exit) and prints scripts/bench/profile-summary.ts's view.
 * `--engine postgres`: svcd on a fresh database of the tests' embedded PostgreSQL.
 */
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BENCH } from "./config.ts";
import { endToEndRun } from "./measure-end-to-end.ts";
import { deliveryRun } from "./measure-delivery.ts";
import { DELAYED, publishLoad } from "./measure-publish.ts";
import { removeDir, SinkClient, startSink, startSvcd } from "./procs.ts";
import { summarise } from "./profile-summary.ts";
import { freshDatabase, stopTestPostgres } from "../../test/helpers/postgres.ts";

const phase = process.argv[2] ?? "publish";
const amount = Number(process.argv[3] ?? (phase === "e2e" || phase === "delivery" ? 20000 : 5));
const rootAt = process.argv.indexOf("--root");
const root = rootAt > 0 ? process.argv[rootAt + 1] : undefined;
const engineAt = process.argv.indexOf("--engine");
const db = engineAt > 0 && process.argv[engineAt + 1] === "postgres" ? await freshDatabase() : undefined;
const profDir = mkdtempSync(join(tmpdir(), "svcd-prof-"));
BENCH.publishSeconds = amount;

const sinkProc = await startSink();
const sink = new SinkClient(sinkProc.url);
const svcd = await startSvcd({ root, db, bunArgs: ["--cpu-prof", `--cpu-prof-dir=${profDir}`, "--cpu-prof-interval=200"] });
try {
  if (phase === "publish") console.log(await publishLoad(svcd, `${sink.url}/p`, DELAYED));
  else if (phase === "delivering") console.log(await publishLoad(svcd, `${sink.url}/p`));
  else if (phase === "e2e") console.log(await endToEndRun(svcd, sink, amount));
  else if (phase === "delivery") console.log(await deliveryRun(svcd, sink, amount, 8000));
  else throw new Error(`unknown phase ${phase}`);
} finally {
  await svcd.stop();
  await sinkProc.stop();
  removeDir(svcd.dir);
  if (db) await stopTestPostgres();
}
const files = readdirSync(profDir).filter((f) => f.endsWith(".cpuprofile"));
console.log(`profiles: ${files.join(", ")}`);
const file = process.env.PROFILE_FILE_INDEX ? files[Number(process.env.PROFILE_FILE_INDEX)] : files[0];
if (!file) throw new Error(`no profile written in ${profDir}`);
console.log(`profile: ${join(profDir, file)}`);
const s = summarise(JSON.parse(await Bun.file(join(profDir, file)).text()), 40);
console.log(`total sampled ${s.totalMs.toFixed(0)} ms\n\nself time:`);
for (const r of s.self) console.log(`${r.pct.toFixed(1).padStart(5)}%  ${r.name}`);
console.log("\ninclusive time:");
for (const r of s.inclusive) console.log(`${r.pct.toFixed(1).padStart(5)}%  ${r.name}`);
