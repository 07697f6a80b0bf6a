/**
 * The image's OCI labels (org.opencontainers.image.*, the image spec's annotations): what it is,
 * under which license, which version, built from which commit of which repository, and when.
 * `npm run build:image` passes them to the build as `--label` arguments; the Containerfile holds
 * the ones that never change, for a build without the script.
 */
import { $ } from "bun";

export interface ImageFacts {
  version: string;
  license: string;
  /** The full commit id the image was built from. */
  revision?: string;
  /** Where its sources are (a browsable https URL). */
  source?: string;
  /** RFC 3339 build time. */
  created: string;
}

export function imageLabels(facts: ImageFacts): Record<string, string> {
  const p = "org.opencontainers.image";
  return {
    [`${p}.title`]: "svcd",
    [`${p}.licenses`]: facts.license,
    [`${p}.version`]: facts.version,
    [`${p}.created`]: facts.created,
    ...(facts.revision ? { [`${p}.revision`]: facts.revision } : {}),
    ...(facts.source ? { [`${p}.source`]: facts.source } : {}),
  };
}

/** `podman build` / `docker build` arguments for the labels. */
export const labelArgs = (labels: Record<string, string>) => Object.entries(labels).flatMap(([name, value]) => ["--label", `${name}=${value}`]);

/** A git remote as a browsable URL: `git@host:owner/repo.git` and `https://host/owner/repo.git` alike. */
export function browsableUrl(remote: string): string | undefined {
  const trimmed = remote.trim();
  const scp = /^[\w.-]+@([\w.-]+):(.+?)(?:\.git)?\/?$/.exec(trimmed);
  if (scp) return `https://${scp[1]}/${scp[2]}`;
  const url = /^(?:https?|ssh|git):\/\/(?:[^@/]+@)?([^/:]+)(?::\d+)?\/(.+?)(?:\.git)?\/?$/.exec(trimmed);
  return url ? `https://${url[1]}/${url[2]}` : undefined;
}

/** The commit and the repository this checkout was cloned from (absent: not known here). */
export async function gitFacts(cwd: string): Promise<Pick<ImageFacts, "revision" | "source">> {
  const git = async (...args: string[]) => (await $`git ${args}`.cwd(cwd).nothrow().quiet()).stdout.toString().trim() || undefined;
  const remote = await git("remote", "get-url", "origin");
  return { revision: await git("rev-parse", "HEAD"), source: remote ? browsableUrl(remote) : undefined };
}
