const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/**
 * Random bytes are drawn from the system 4 KiB at a time: asking for a few dozen per id (every
 * publish makes one, every delivery signs with another) cost more than the rest of making it.
 */
const randomPool = new Uint8Array(4096);
let randomAt = randomPool.length;

const BASE58_CODES = Uint8Array.from(BASE58, (c) => c.charCodeAt(0));
let chars = Buffer.allocUnsafe(64);

/** Fills `into[from..to)` with random base58 characters. */
function fillRandom(into: Buffer, from: number, to: number): void {
  let k = from;
  while (k < to) {
    if (randomAt === randomPool.length) {
      crypto.getRandomValues(randomPool);
      randomAt = 0;
    }
    const b = randomPool[randomAt++]!;
    if (b < 232) into[k++] = BASE58_CODES[b % 58]!;
  }
}

/**
 * Random base58 text; rejection sampling (bytes ≥ 232 = 4 × 58 are skipped) keeps every character
 * equally likely. The characters go into a byte buffer read out as one flat string: appending
 * them one by one left a 24-piece rope to flatten later, about 1 µs per signed delivery.
 */
export function randomBase58(length: number): string {
  if (chars.length < length) chars = Buffer.allocUnsafe(length);
  fillRandom(chars, 0, length);
  return chars.toString("latin1", 0, length);
}

const MESSAGE_ID_LENGTH = "msg_".length + 8 + 18;
/** The message id being made; it keeps `msg_` and the time's characters of `prefixMs` between ids. */
const messageId = Buffer.from("msg_".padEnd(MESSAGE_ID_LENGTH), "latin1");
let prefixMs = -1;

/**
 * `msg_`, 8 characters of creation time (ms) then 18 random ones (~105 bits). Ids that sort by
 * time keep every index on a message id (the messages key, the event log's message index)
 * appending near its end: random ids dirtied one B-tree page per message and index at each commit.
 * Written into one buffer, the time's characters kept from the last id of the same millisecond:
 * a publish makes one id per message.
 */
export function newMessageId(): string {
  const ms = Date.now();
  if (ms !== prefixMs) {
    let n = ms;
    for (let i = 11; i >= 4; i--) {
      messageId[i] = BASE58_CODES[n % 58]!;
      n = Math.floor(n / 58);
    }
    prefixMs = ms;
  }
  fillRandom(messageId, 12, MESSAGE_ID_LENGTH);
  return messageId.toString("latin1");
}

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
