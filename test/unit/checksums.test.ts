import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeChecksums } from "../../scripts/checksums.ts";

test("SHA256SUMS lists each binary by name and `sha256sum -c` accepts it, and rejects a changed file", () => {
  const dir = mkdtempSync(join(tmpdir(), "svcd-sums-"));
  try {
    writeFileSync(join(dir, "svcd-linux-x64"), "one binary");
    writeFileSync(join(dir, "svcd-windows-x64.exe"), "another");
    const out = writeChecksums(dir, [join(dir, "svcd-windows-x64.exe"), join(dir, "svcd-linux-x64")]);
    expect(readFileSync(out, "utf8")).toBe(
      // sha256("one binary") and sha256("another"), sorted by name, two spaces as sha256sum writes.
      `${new Bun.CryptoHasher("sha256").update("one binary").digest("hex")}  svcd-linux-x64\n` +
        `${new Bun.CryptoHasher("sha256").update("another").digest("hex")}  svcd-windows-x64.exe\n`,
    );
    const ok = Bun.spawnSync(["sha256sum", "-c", "SHA256SUMS"], { cwd: dir });
    expect({ exit: ok.exitCode, out: ok.stdout.toString() }).toEqual({ exit: 0, out: "svcd-linux-x64: OK\nsvcd-windows-x64.exe: OK\n" });
    writeFileSync(join(dir, "svcd-linux-x64"), "tampered");
    expect(Bun.spawnSync(["sha256sum", "-c", "SHA256SUMS"], { cwd: dir }).exitCode).toBe(1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
