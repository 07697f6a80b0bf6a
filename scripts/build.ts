/** `npm run build`: compiles svcd for this machine into one executable, `dist/svcd`. */
import { buildStamp, compile, megabytes } from "./compile.ts";

const out = process.argv[2] ?? "dist/svcd";
await compile(out, await buildStamp());
console.log(`built ${out} (${megabytes(Bun.file(out).size)})`);
