"use strict";
/**
 * Where the svcd executable is, for `npx svcd` (bin/svcd.cjs) and the test kit: the prebuilt
 * binary of this platform's package (`@svcd/linux-x64`, ... installed as optional dependencies of
 * `svcd`, as esbuild ships its binaries), else, inside svcd's own repository, the sources run by
 * Bun. Node built-ins only.
 */
const fs = require("node:fs");
const path = require("node:path");

/** `process.platform process.arch` -> the package holding that platform's binary. */
const PLATFORM_PACKAGES = {
  "linux x64": "@svcd/linux-x64",
  "linux arm64": "@svcd/linux-arm64",
  "darwin x64": "@svcd/darwin-x64",
  "darwin arm64": "@svcd/darwin-arm64",
  "win32 x64": "@svcd/windows-x64",
};

const platformPackage = (platform = process.platform, arch = process.arch) => PLATFORM_PACKAGES[`${platform} ${arch}`];

/** The package root: two folders up, in the repository and in the published package alike. */
const ROOT = path.join(__dirname, "..", "..");

function fromPlatformPackage() {
  const name = platformPackage();
  if (!name) return undefined;
  try {
    return require.resolve(`${name}/bin/svcd${process.platform === "win32" ? ".exe" : ""}`, { paths: [ROOT, process.cwd()] });
  } catch {
    return undefined;
  }
}

function fromSource() {
  const main = path.join(ROOT, "src", "main.ts");
  if (!fs.existsSync(main)) return undefined;
  if (process.versions.bun) return { command: process.execPath, args: [main] };
  const bun = path.join(ROOT, "node_modules", ".bin", process.platform === "win32" ? "bun.exe" : "bun");
  return fs.existsSync(bun) ? { command: bun, args: [main] } : undefined;
}

/**
 * `{ command, args }` to start svcd with: `binary` or $SVCD_BINARY when given, else this
 * platform's package, else the repository's sources. Throws a message saying what to install.
 */
function findSvcd(binary = process.env.SVCD_BINARY) {
  if (binary) return { command: binary, args: [] };
  const prebuilt = fromPlatformPackage();
  if (prebuilt) return { command: prebuilt, args: [] };
  const source = fromSource();
  if (source) return source;
  const name = platformPackage();
  throw new Error(
    name
      ? `svcd: the package ${name} with the binary for ${process.platform}-${process.arch} is not installed; ` +
          "reinstall svcd without --no-optional (or --omit=optional), or set SVCD_BINARY to an svcd executable"
      : `svcd: no prebuilt binary for ${process.platform}-${process.arch}; set SVCD_BINARY to an svcd executable`,
  );
}

module.exports = { findSvcd, platformPackage, PLATFORM_PACKAGES };
