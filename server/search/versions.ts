import semver from 'semver';
import type { LibraryVersion } from '../model.ts';
import type { VersionStatus } from './contracts.ts';

/** The library version chosen for a request and how it relates to what was asked. */
export interface VersionChoice {
  version: LibraryVersion;
  /** The tag asked for (null when none, or `latest`). */
  requested: string | null;
  /** null when nothing was requested; otherwise verified, prerelease or unverified (current docs served instead). */
  status: VersionStatus | null;
}

function clean(tag: string): string {
  return tag.trim().replace(/^v(?=\d)/i, '').replace(/_/g, '.');
}

/** A loose semver of a tag ("v4.29.1", "4.29", "5.0.0-rc.1"), or null. */
function versionOf(tag: string): semver.SemVer | null {
  const c = clean(tag);
  return semver.valid(c) ? new semver.SemVer(c) : semver.coerce(c, { includePrerelease: true });
}

/**
 * Picks the served version of a library for a requested tag. Order: exact tag; the same tag
 * without/with a leading v; then semver: "4" means the newest 4.x, "4.29" the newest 4.29.x,
 * stable tags before prereleases (a prerelease that is the only match for a stable request gives
 * status prerelease). Nothing matches: the current documentation (tag '') with status unverified.
 * `versions` are the library's served versions (is_current = 1). Returns null when there are none.
 */
export function chooseVersion(versions: LibraryVersion[], requested: string | null | undefined): VersionChoice | null {
  const served = versions.filter((v) => v.isCurrent && v.state === 'ready');
  if (served.length === 0) return null;
  const current = served.find((v) => v.tag === '') ?? newest(served);
  const req = requested && requested.trim() && !/^latest$/i.test(requested.trim()) ? requested.trim() : null;
  if (!req) return { version: current, requested: null, status: null };

  const exact = served.find((v) => v.tag === req) ?? served.find((v) => v.tag !== '' && clean(v.tag).toLowerCase() === clean(req).toLowerCase());
  if (exact) return { version: exact, requested: req, status: isPrerelease(exact.tag) && !isPrerelease(req) ? 'prerelease' : 'verified' };

  const c = clean(req);
  const groups = c.split(/[-+]/)[0]!.split('.').length;
  const base = semver.coerce(c);
  if (base) {
    const range = groups === 1 ? `${base.major}.x` : groups === 2 ? `${base.major}.${base.minor}.x` : base.version;
    const tagged = served.filter((v) => v.tag !== '').map((v) => ({ v, sv: versionOf(v.tag) })).filter((x): x is { v: LibraryVersion; sv: semver.SemVer } => x.sv !== null);
    const stable = tagged.filter((x) => x.sv.prerelease.length === 0 && semver.satisfies(x.sv, range));
    if (stable.length) return { version: best(stable), requested: req, status: 'verified' };
    const pre = tagged.filter((x) => semver.satisfies(x.sv, range, { includePrerelease: true }) || (x.sv.major === base.major && (groups < 2 || x.sv.minor === base.minor)));
    if (pre.length) return { version: best(pre), requested: req, status: 'prerelease' };
  }
  return { version: current, requested: req, status: 'unverified' };
}

function best(xs: { v: LibraryVersion; sv: semver.SemVer }[]): LibraryVersion {
  return [...xs].sort((a, b) => semver.rcompare(a.sv, b.sv))[0]!.v;
}

function isPrerelease(tag: string): boolean {
  const sv = versionOf(tag);
  return !!sv && sv.prerelease.length > 0 && /-/.test(tag);
}

function newest(vs: LibraryVersion[]): LibraryVersion {
  const withSv = vs.map((v) => ({ v, sv: versionOf(v.tag) }));
  const sem = withSv.filter((x): x is { v: LibraryVersion; sv: semver.SemVer } => x.sv !== null);
  if (sem.length) return best(sem);
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
