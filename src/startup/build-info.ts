import pkg from "../../package.json" with { type: "json" };

// Set by `bun build --define` (scripts/build.ts); absent when running from source.
declare const SVCD_BUILD_COMMIT: string | undefined;
declare const SVCD_BUILD_DATE: string | undefined;

export interface BuildInfo {
  version: string;
  commit: string;
  /** ISO time of the build; null when running from source. */
  date: string | null;
}

function fromGit(): string {
  try {
    const git = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { cwd: import.meta.dir, stderr: "ignore" });
    const commit = git.stdout.toString().trim();
    return git.exitCode === 0 && commit ? commit : "unknown";
  } catch {
    return "unknown";
  }
}

let cached: BuildInfo | undefined;

/** Version, commit and build date: embedded by the build, read from git (once) when running from source. */
export function buildInfo(): BuildInfo {
  cached ??= readBuildInfo();
  return cached;
}

function readBuildInfo(): BuildInfo {
  const built = typeof SVCD_BUILD_COMMIT === "string" && typeof SVCD_BUILD_DATE === "string";
  return {
    version: pkg.version,
    commit: built ? SVCD_BUILD_COMMIT : fromGit(),
    date: built ? SVCD_BUILD_DATE : null,
  };
}

export function versionText(info = buildInfo()): string {
  const built = info.date ? `built ${info.date}` : "running from source";
  return `svcd ${info.version} (commit ${info.commit}, ${built}, bun ${Bun.version}, ${process.platform}-${process.arch})`;
}
