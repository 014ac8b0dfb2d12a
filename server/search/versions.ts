import semver from 'semver';
import type { LibraryVersion } from '../../lib/model.ts';
import type { VersionStatus } from './answer-types.ts';

/**
 * Library versions: a version request (the `version` parameter, version-like tags on library values
 * and library IDs; VERSION_PATTERN, the contract's) parsed and matched against the indexed tags, and
 * the one resolver of both endpoints (chooseVersion) with the one default version (defaultVersionOf).
 */

export function isLatest(raw: string): boolean {
  return raw.toLowerCase() === 'latest';
}

/** A parsed version request or tag: numeric groups (1-3), prerelease ('-' suffix) and build ('+' suffix). */
export interface VersionSpec {
  raw: string;
  groups: number[];
  prerelease: string | null;
  build: string | null;
}

const SPEC = /^[vV]?(\d+)(?:[._](\d+))?(?:[._](\d+))?(?:([-+])([A-Za-z0-9.+-]*))?$/;

/** Parses a request or an indexed tag; null when it is not version-like (e.g. a tag named `canary`). */
export function parseVersion(raw: string): VersionSpec | null {
  const m = SPEC.exec(raw.trim());
  if (!m) return null;
  const groups = [m[1], m[2], m[3]].filter((g): g is string => g !== undefined).map((g) => Number(g));
  let prerelease: string | null = null;
  let build: string | null = null;
  if (m[4] === '+') build = m[5] || null;
  else if (m[4] === '-') {
    // A tag such as 1.2.3-rc.1+build.5 carries both.
    const [pre, ...rest] = (m[5] ?? '').split('+');
    prerelease = pre || null;
    build = rest.length ? rest.join('+') : null;
  }
  return { raw, groups, prerelease, build };
}

/** Full semver string of a spec (missing groups are 0), for ordering. */
function toSemver(v: VersionSpec): string | null {
  const [a = 0, b = 0, c = 0] = v.groups;
  const s = `${a}.${b}.${c}${v.prerelease ? `-${v.prerelease}` : ''}`;
  return semver.valid(s);
}

/** True when `tag` lies inside the range the request names (v4 -> 4.x, 4.2 -> 4.2.x, 4.2.1 -> exactly). */
function covers(req: VersionSpec, tag: VersionSpec): boolean {
  for (let i = 0; i < req.groups.length; i++) if ((tag.groups[i] ?? 0) !== req.groups[i]) return false;
  if (req.prerelease !== null) return (tag.prerelease ?? '').toLowerCase() === req.prerelease.toLowerCase();
  return true;
}

export interface VersionMatch {
  /** The indexed version to serve, or null when none matches. */
  version: LibraryVersion | null;
  /** verified: the requested version is served; prerelease: only a prerelease tag matched a stable request. */
  status: VersionStatus;
}

/**
 * Resolves a request against the indexed (ready, current) tagged versions of one library.
 * Stable tags are preferred; a prerelease tag matches a stable request only when no stable tag
 * does (status prerelease). Among matches, documentation marked verified wins, then the newest.
 * A `+build` suffix does not narrow the match (semver ignores build metadata), but an exactly
 * equal tag is always preferred.
 */
export function resolveVersion(requested: string, versions: LibraryVersion[]): VersionMatch {
  const tagged = versions.filter((v) => v.tag !== '');
  const norm = (s: string) => s.replace(/^[vV]/, '').replace(/_/g, '.').toLowerCase();
  const exact = tagged.filter((v) => v.tag.toLowerCase() === requested.toLowerCase() || norm(v.tag) === norm(requested));
  const req = parseVersion(requested);
  if (exact.length > 0) {
    const best = pickBest(exact);
    const spec = parseVersion(best.tag);
    const preOnly = spec?.prerelease && req && !req.prerelease;
    return { version: best, status: preOnly ? 'prerelease' : 'verified' };
  }
  if (!req) return { version: null, status: 'unverified' };
  const candidates = tagged
    .map((v) => ({ v, spec: parseVersion(v.tag) }))
    .filter((c): c is { v: LibraryVersion; spec: VersionSpec } => c.spec !== null && covers(req, c.spec));
  if (candidates.length === 0) return { version: null, status: 'unverified' };
  if (req.prerelease !== null) return { version: pickBest(candidates.map((c) => c.v)), status: 'verified' };
  const stable = candidates.filter((c) => c.spec.prerelease === null);
  if (stable.length > 0) return { version: pickBest(stable.map((c) => c.v)), status: 'verified' };
  return { version: pickBest(candidates.map((c) => c.v)), status: 'prerelease' };
}

/** Verified documentation first, then the highest version. */
function pickBest(versions: LibraryVersion[]): LibraryVersion {
  return [...versions].sort((a, b) => {
    if (a.verified !== b.verified) return a.verified ? -1 : 1;
    const sa = parseVersion(a.tag);
    const sb = parseVersion(b.tag);
    const va = sa ? toSemver(sa) : null;
    const vb = sb ? toSemver(sb) : null;
    if (va && vb) return semver.rcompare(va, vb);
    if (va) return -1;
    if (vb) return 1;
    return b.id - a.id;
  })[0]!;
}

/**
 * True when the library's current documentation is itself the requested version: its branch
 * (e.g. `5.x`, `v5.2.0`) lies inside the requested range. Then current documentation is the
 * requested version ("the source pins it") and is served as verified.
 */
export function branchSatisfies(requested: string, branch: string | null, versions: LibraryVersion[]): boolean {
  if (!branch) return false;
  // A tagged import also writes the library's branch; a branch equal to an indexed tag says
  // nothing about the current documentation.
  if (versions.some((v) => v.tag !== '' && v.tag.toLowerCase() === branch.toLowerCase())) return false;
  const req = parseVersion(requested);
  if (!req || req.prerelease) return false;
  const m = /^[vV]?(\d+)(?:\.(\d+|x))?(?:\.(\d+|x))?$/.exec(branch.trim());
  if (!m) return false;
  const groups = [m[1], m[2], m[3]];
  for (let i = 0; i < req.groups.length; i++) {
    const g = groups[i];
    if (g === undefined || g === 'x') return false;
    if (Number(g) !== req.groups[i]) return false;
  }
  return true;
}

const rank: Record<VersionStatus, number> = { verified: 0, prerelease: 1, unverified: 2 };

/** The worst of several outcomes (unverified > prerelease > verified). */
export function worstStatus(statuses: VersionStatus[]): VersionStatus {
  return statuses.reduce<VersionStatus>((w, s) => (rank[s] > rank[w] ? s : w), 'verified');
}

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
  const c = tag
    .trim()
    .replace(/^v(?=\d)/i, '')
    .replace(/_/g, '.');
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
