const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/**
 * Random bytes are drawn from the system 4 KiB at a time: asking for a few dozen per id (every
 * publish makes one, every delivery signs with another) cost more than the rest of making it.
 */
const randomPool = new Uint8Array(4096);
let randomAt = randomPool.length;

const BASE58_CODES = Uint8Array.from(BASE58, (c) => c.charCodeAt(0));
let chars = Buffer.allocUnsafe(64);

/**
 * Random base58 text; rejection sampling (bytes ≥ 232 = 4 × 58 are skipped) keeps every character
 * equally likely. The characters go into a byte buffer read out as one flat string: appending
 * them one by one left a 24-piece rope to flatten later, about 1 µs per signed delivery.
 */
export function randomBase58(length: number): string {
  if (chars.length < length) chars = Buffer.allocUnsafe(length);
  let k = 0;
  while (k < length) {
    if (randomAt === randomPool.length) {
      crypto.getRandomValues(randomPool);
      randomAt = 0;
    }
    const b = randomPool[randomAt++]!;
    if (b < 232) chars[k++] = BASE58_CODES[b % 58]!;
  }
  return chars.toString("latin1", 0, length);
}

/** Fixed-width base58 of a non-negative integer; the alphabet is in ASCII order, so text order = number order. */
function base58Fixed(n: number, width: number): string {
  let out = "";
  for (let i = 0; i < width; i++) {
    out = BASE58[n % 58] + out;
    n = Math.floor(n / 58);
  }
  return out;
}

/**
 * 8 characters of creation time (ms) then 18 random ones (~105 bits). Ids that sort by time keep
 * every index on a message id (the messages key, the event log's message index) appending near
 * its end: random ids dirtied one B-tree page per message and index at each commit.
 */
export const newMessageId = () => "msg_" + base58Fixed(Date.now(), 8) + randomBase58(18);
export const newScheduleId = () => "scd_" + randomBase58(26);
export const newSigningKey = () => "sig_" + randomBase58(28);
export const newSecret = (prefix: string) => prefix + randomBase58(32);

/** DLQ ids look like `1725323658779-0`: creation ms plus a per-millisecond sequence. */
export class DlqIdSequence {
  private lastMs = -1;
  private seq = 0;
  /**
   * `node` of `nodes`: processes sharing one database each number their ids within a millisecond
   * as node, node + nodes, node + 2 × nodes, ...: two processes never make the same id.
   */
  constructor(private readonly node: number | (() => number) = 0, private readonly nodes = 1) {}
  next(nowMs: number): string {
    const node = typeof this.node === "number" ? this.node : this.node();
    if (nowMs === this.lastMs) this.seq++;
    else {
      this.lastMs = nowMs;
      this.seq = 0;
    }
    return `${nowMs}-${this.seq * this.nodes + node}`;
  }
}
