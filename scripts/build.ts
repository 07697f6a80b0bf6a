/**
 * Compiles svcd into one executable, `dist/svcd`. The delivery worker is a second entry point so
 * the binary can start its worker threads; the binary ignores any .env or bunfig.toml where it runs.
 */
import { $ } from "bun";

const out = process.argv[2] ?? "dist/svcd";
await $`bun build --compile --minify --sourcemap=none --no-compile-autoload-dotenv --no-compile-autoload-bunfig ./src/main.ts ./src/delivery/worker.ts ./src/store/checkpointer.ts --outfile ${out}`;
const size = Bun.file(out).size;
console.log(`built ${out} (${(size / 1024 / 1024).toFixed(1)} MB)`);
