/**
 * One `bun build --compile` of svcd. The delivery worker and the WAL checkpointer are extra entry
 * points so the binary can start their threads; the binary ignores any
 * .env or bunfig.toml where it runs. Version, commit and build date are embedded for `svcd --version`.
 */
import { $ } from "bun";

export interface BuildStamp {
  commit: string;
  date: string;
}

/** The commit being built (`-dirty` with uncommitted changes) and the build time (or SOURCE_DATE_EPOCH). */
export async function buildStamp(): Promise<BuildStamp> {
  const head = (await $`git rev-parse --short=12 HEAD`.nothrow().quiet()).stdout.toString().trim();
  const dirty = (await $`git status --porcelain --untracked-files=no`.nothrow().quiet()).stdout.toString().trim() !== "";
  const epoch = Number(process.env.SOURCE_DATE_EPOCH);
  const date = new Date(Number.isFinite(epoch) && epoch > 0 ? epoch * 1000 : Date.now()).toISOString().replace(/\.\d{3}Z$/, "Z");
  return { commit: head ? `${head}${dirty ? "-dirty" : ""}` : "unknown", date };
}

/** `target`: a Bun compile target such as `bun-linux-arm64`; the host's own when left out. */
export async function compile(out: string, stamp: BuildStamp, target?: string): Promise<void> {
  const targetFlag = target ? [`--target=${target}`] : [];
  const defines = [`--define=SVCD_BUILD_COMMIT=${JSON.stringify(stamp.commit)}`, `--define=SVCD_BUILD_DATE=${JSON.stringify(stamp.date)}`];
  await $`bun build --compile ${targetFlag} ${defines} --minify --sourcemap=none --no-compile-autoload-dotenv --no-compile-autoload-bunfig ./src/main.ts ./src/delivery/worker.ts ./src/engines/sqlite/checkpointer.ts --outfile ${out}`.quiet();
}

export const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
