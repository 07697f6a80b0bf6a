/**
 * `npm run build:image`: the container image of svcd, FROM scratch (Containerfile). Compiles the
 * binary (as `npm run build` does), assembles dist/image/rootfs: the binary, the shared libraries
 * `ldd` says it links (at the same paths), the CA certificates, /etc/passwd and /etc/group with
 * the user svcd (10001), /tmp; and dist/image/data, the folder the volume /data starts from. Then
 * builds the image with podman, or docker, tagged svcd:<version> and svcd:latest, with the OCI
 * labels (license, version, revision, source, creation time: scripts/image-labels.ts).
 *
 * `-- --tool podman|docker` (or $CONTAINER_TOOL) picks the tool, `-- --tag NAME` the tag,
 * `-- --assemble-only` stops before building (to build elsewhere); extra global options for the
 * tool go in $CONTAINER_TOOL_OPTIONS (e.g. `--runtime runc --cgroup-manager cgroupfs`).
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import pkg from "../package.json" with { type: "json" };
import { buildStamp, compile, megabytes } from "./compile.ts";
import { gitFacts, imageLabels, labelArgs } from "./image-labels.ts";

const args = process.argv.slice(2);
const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const ROOT = new URL("..", import.meta.url).pathname;
const image = join(ROOT, "dist", "image");
const rootfs = join(image, "rootfs");
const CA_CERTS = ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem"];

if (process.platform !== "linux") {
  console.error("build:image: a Linux image is built on Linux (the libraries come from this machine)");
  process.exit(2);
}

rmSync(image, { recursive: true, force: true });
mkdirSync(join(rootfs, "usr/local/bin"), { recursive: true });
const binary = join(rootfs, "usr/local/bin/svcd");
const stamp = await buildStamp();
await compile(binary, stamp);

/** Copies a file to the same path in the image, following symbolic links to the real file. */
function copyIn(path: string) {
  const target = join(rootfs, path);
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(realpathSync(path), target);
  chmodSync(target, 0o755);
}

// `libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)` and the loader `/lib64/ld-linux-x86-64.so.2 (0x...)`.
const ldd = Bun.spawnSync(["ldd", binary]);
if (ldd.exitCode !== 0) throw new Error(`ldd ${binary}: ${ldd.stderr}`);
const libraries = [...ldd.stdout.toString().matchAll(/(?:=>\s*)?(\/\S+)\s+\(0x/g)].map((m) => m[1]!);
for (const library of libraries) copyIn(library);

const caFile = CA_CERTS.find((path) => existsSync(path));
if (!caFile) throw new Error(`build:image: no CA certificate bundle at ${CA_CERTS.join(", ")}; install ca-certificates`);
mkdirSync(join(rootfs, "etc/ssl/certs"), { recursive: true });
copyFileSync(caFile, join(rootfs, "etc/ssl/certs/ca-certificates.crt"));
writeFileSync(join(rootfs, "etc/passwd"), "root:x:0:0:root:/root:/sbin/nologin\nsvcd:x:10001:10001:svcd:/data:/sbin/nologin\n");
writeFileSync(join(rootfs, "etc/group"), "root:x:0:\nsvcd:x:10001:\n");
// Names such as a compose service (`postgres`) resolve from /etc/hosts, then DNS.
writeFileSync(join(rootfs, "etc/nsswitch.conf"), "hosts: files dns\n");
mkdirSync(join(rootfs, "tmp"));
chmodSync(join(rootfs, "tmp"), 0o1777);
mkdirSync(join(image, "data"));
console.log(`assembled ${rootfs}: svcd (${megabytes(Bun.file(binary).size)}), ${libraries.join(", ")}, ${caFile}`);
if (args.includes("--assemble-only")) process.exit(0);

const tool = option("--tool") ?? process.env.CONTAINER_TOOL ?? ["podman", "docker"].find((name) => Bun.which(name));
if (!tool) {
  console.error("build:image: neither podman nor docker is installed; the image's files are in dist/image (--assemble-only)");
  process.exit(2);
}
const tags = option("--tag") ? [option("--tag")!] : [`svcd:${pkg.version}`, "svcd:latest"];
const globals = (process.env.CONTAINER_TOOL_OPTIONS ?? "").split(/\s+/).filter(Boolean);
// podman writes the OCI format by default, which has no HEALTHCHECK: the docker format keeps it.
const format = tool.endsWith("podman") ? ["--format", "docker"] : [];
const labels = imageLabels({ version: pkg.version, license: pkg.license, created: stamp.date, ...(await gitFacts(ROOT)) });
const command = [tool, ...globals, "build", ...format, ...labelArgs(labels), "-f", "Containerfile", ...tags.flatMap((t) => ["-t", t]), "."];
const build = Bun.spawnSync(command, { cwd: ROOT, stdout: "inherit", stderr: "inherit" });
if (build.exitCode !== 0) process.exit(build.exitCode ?? 1);
console.log(`built ${tags.join(", ")} with ${tool}`);
