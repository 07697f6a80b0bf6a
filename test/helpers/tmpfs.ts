import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitUntil } from "./wait.ts";

let missing: string | null | undefined;

/**
 * A real small or read-only file system needs a tmpfs mount: root on Linux, where mounting is
 * allowed. Null when it can be had, else what is missing (the callers skip and say so).
 */
export function tmpfsMissing(): string | null {
  if (missing !== undefined) return missing;
  if (process.platform !== "linux") return (missing = "needs Linux to mount a tmpfs");
  if (process.getuid?.() !== 0) return (missing = "needs root to mount a tmpfs");
  const probe = mkdtempSync(join(tmpdir(), "svcd-mount-probe-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe], { stdio: "ignore" });
    execFileSync("umount", [probe], { stdio: "ignore" });
    missing = null;
  } catch {
    missing = "mounting a tmpfs is not allowed here, even as root (a container without CAP_SYS_ADMIN)";
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
  return missing;
}

/** Mounts a tmpfs of `size` (e.g. "2m") on a fresh folder for the duration of `use`. */
export async function withTmpfs<T>(opts: { size: string; readOnly?: boolean }, use: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "svcd-tmpfs-"));
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${opts.size}${opts.readOnly ? ",ro" : ""}`, "tmpfs", dir]);
  try {
    return await use(dir);
  } finally {
    // A process killed a moment ago may still hold a file open: unmounting can take a few tries.
    await waitUntil(
      () => {
        try {
          execFileSync("umount", [dir], { stdio: "ignore" });
          return true;
        } catch {
          return false;
        }
      },
      { timeoutMs: 5_000, what: "the tmpfs to unmount" },
    );
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes zeros into `file` until the file system has no byte left. */
export function fillUp(file: string): void {
  const fd = openSync(file, "w");
  const chunk = new Uint8Array(16 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
    for (let size = 1024; size >= 1; size >>= 1) {
      try {
        for (;;) writeSync(fd, chunk.subarray(0, size));
      } catch {
        // the next, smaller size
      }
    }
  } finally {
    closeSync(fd);
  }
}
