const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** Random base58 text; rejection sampling keeps every character equally likely. */
export function randomBase58(length: number): string {
  let out = "";
  while (out.length < length) {
    const bytes = crypto.getRandomValues(new Uint8Array(length * 2));
    for (const b of bytes) {
      if (b < 232 && out.length < length) out += BASE58[b % 58];
    }
  }
  return out;
}

export const newMessageId = () => "msg_" + randomBase58(26);
export const newScheduleId = () => "scd_" + randomBase58(26);
export const newSigningKey = () => "sig_" + randomBase58(28);
export const newSecret = (prefix: string) => prefix + randomBase58(32);

/** DLQ ids look like `1725323658779-0`: creation ms plus a per-millisecond sequence. */
export class DlqIdSequence {
  private lastMs = -1;
  private seq = 0;
  next(nowMs: number): string {
    if (nowMs === this.lastMs) this.seq++;
    else {
      this.lastMs = nowMs;
      this.seq = 0;
    }
    return `${nowMs}-${this.seq}`;
  }
}
