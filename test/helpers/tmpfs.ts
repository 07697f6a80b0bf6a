import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitUntil } from "./wait.ts";

let mountable: boolean | undefined;

/** A real small or read-only file system needs a tmpfs mount: root on Linux, where mounting is allowed. */
export function canMountTmpfs(): boolean {
  if (mountable !== undefined) return mountable;
  mountable = false;
  if (process.platform !== "linux" || process.getuid?.() !== 0) return mountable;
  const probe = mkdtempSync(join(tmpdir(), "svcd-mount-probe-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe], { stdio: "ignore" });
    execFileSync("umount", [probe], { stdio: "ignore" });
    mountable = true;
  } catch {
    // not allowed here (a container without the capability): the callers skip
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
  return mountable;
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
