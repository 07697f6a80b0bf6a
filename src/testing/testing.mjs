// ESM entry of svcd/testing; the implementation is CommonJS so Jest's default mode loads it too.
import kit from "./testing.cjs";

export const { startSvcd, toMs, findSvcd } = kit;
