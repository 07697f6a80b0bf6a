/**
 * `SHA256SUMS` beside the release binaries, in the format `sha256sum -c` and `shasum -a 256 -c`
 * read: a user checks a download with `sha256sum -c --ignore-missing SHA256SUMS`.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";

export function sha256(path: string): string {
  return new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("hex");
}

/** Writes `<dir>/SHA256SUMS` naming each file by its base name; returns the file's path. */
export function writeChecksums(dir: string, files: readonly string[]): string {
  const lines = [...files].sort().map((file) => `${sha256(file)}  ${basename(file)}\n`);
  const out = join(dir, "SHA256SUMS");
  writeFileSync(out, lines.join(""));
  return out;
}
