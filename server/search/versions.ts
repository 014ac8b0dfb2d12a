import semver from 'semver';
import type { LibraryVersion } from '../../lib/model.ts';
import type { VersionStatus } from './answer-types.ts';
import { branchSatisfies, isLatest, resolveVersion } from './version.ts';

/** The library version chosen for a request and how it relates to what was asked. */
export interface VersionChoice {
  version: LibraryVersion;
  /** The tag asked for (null when none, or `latest`). */
  requested: string | null;
  /** null when nothing was requested; otherwise verified, prerelease or unverified (current docs served instead). */
  status: VersionStatus | null;
}

/** A loose semver of a tag ("v4.29.1", "4.29", "5.0.0-rc.1"), or null; used to find the newest tag. */
function versionOf(tag: string): semver.SemVer | null {
  const c = tag.trim().replace(/^v(?=\d)/i, '').replace(/_/g, '.');
  return semver.valid(c) ? new semver.SemVer(c) : semver.coerce(c, { includePrerelease: true });
}

/**
 * The version resolver of both endpoints (/api/v2/context's library ID, each library /api/v3/search
 * selects): picks the served version of a library for a requested tag, matched by
 * server/search/version.ts: exact tag (with or without a leading v); then "4" means the newest
 * 4.x, "4.29" the newest 4.29.x, stable tags before prereleases (a prerelease that is the only match
 * for a stable request gives status prerelease); current documentation whose branch pins the
 * requested version (branch 5.x for v5) counts as verified. Nothing matches: the current
 * documentation (tag '') with status unverified. `latest` is no request. `versions` are all of the
 * library's versions; only served ones (is_current, ready) are considered. Null when none is served.
 */
export function chooseVersion(versions: LibraryVersion[], requested: string | null | undefined, branch: string | null = null): VersionChoice | null {
  const served = versions.filter((v) => v.isCurrent && v.state === 'ready');
  if (served.length === 0) return null;
  // With nothing to serve anywhere, the current documentation still answers (that it has nothing).
  const current = defaultVersionOf(served) ?? served.find((v) => v.tag === '') ?? newest(served);
  const req = requested && requested.trim() && !isLatest(requested.trim()) ? requested.trim() : null;
  if (!req) return { version: current, requested: null, status: null };
  const match = resolveVersion(req, served);
  if (match.version) return { version: match.version, requested: req, status: match.status };
  if (current.tag === '' && branchSatisfies(req, branch, served)) return { version: current, requested: req, status: 'verified' };
  return { version: current, requested: req, status: 'unverified' };
}

/**
 * The version served when none is asked for, the one answer both endpoints and library selection
 * use: the current documentation (tag ''), else the newest tagged release by semver (a prerelease
 * only when there is no release; by date when no tag reads as a version), among the served
 * versions that have snippets. Null when none has.
 */
export function defaultVersionOf(versions: LibraryVersion[]): LibraryVersion | null {
  const withDocs = versions.filter((v) => v.isCurrent && v.state === 'ready' && v.totalSnippets > 0);
  if (withDocs.length === 0) return null;
  return withDocs.find((v) => v.tag === '') ?? newest(withDocs);
}

function newest(vs: LibraryVersion[]): LibraryVersion {
  const sem = vs.map((v) => ({ v, sv: versionOf(v.tag) })).filter((x): x is { v: LibraryVersion; sv: semver.SemVer } => x.sv !== null);
  // A release before a prerelease (a default is what most users run), then the highest.
  if (sem.length) return [...sem].sort((a, b) => Number(a.sv.prerelease.length > 0) - Number(b.sv.prerelease.length > 0) || semver.rcompare(a.sv, b.sv))[0]!.v;
  return [...vs].sort((a, b) => b.updatedAt.localeCompare(a.updatedAt))[0]!;
}

/** The X-Stacks-Search-* headers for a version outcome (none when no version was requested). */
export function versionHeaders(status: VersionStatus | null): Record<string, string> {
  if (status === null) return {};
  const h: Record<string, string> = { 'X-Stacks-Search-Version': status };
  if (status === 'unverified') Object.assign(h, { 'X-Stacks-Search-Status': 'partial', 'X-Stacks-Search-Reason': 'versionUnverified' });
  if (status === 'prerelease') Object.assign(h, { 'X-Stacks-Search-Status': 'partial', 'X-Stacks-Search-Reason': 'versionPrerelease' });
  return h;
}
