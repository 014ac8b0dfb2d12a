import type { Library } from '../../lib/model.ts';
import type { Policy, PolicySourceType } from '../contracts/policy.ts';

/**
 * Which policy source type a stored library belongs to. A source repository is `public_repos`
 * when it is visible instance-wide and `private_sources` when only teamspaces may read it. An OpenAPI library counts as
 * `websites` when it was fetched from a URL and as `uploaded_files` when it was uploaded.
 */
export function policySourceTypeOf(library: Pick<Library, 'sourceType' | 'sourceUrl' | 'visibility'>): PolicySourceType {
  switch (library.sourceType) {
    case 'repo':
      return library.visibility === 'instance' ? 'public_repos' : 'private_sources';
    case 'website':
      return 'websites';
    case 'llmstxt':
      return 'llmstxt';
    case 'files':
      return 'uploaded_files';
    case 'confluence':
      return 'confluence';
    case 'openapi':
      return library.sourceUrl && /^https?:\/\//i.test(library.sourceUrl) ? 'websites' : 'uploaded_files';
    default:
      return 'public_repos';
  }
}

/** A policy prepared for fast repeated checks (sets instead of arrays, lower-cased domains). */
export interface CompiledPolicy {
  policy: Policy;
  disabled: Set<PolicySourceType>;
  mode: 'quality' | 'select';
  blockedIds: Set<string>;
  blockedDomains: string[];
  excepted: Set<string>;
  allowed: Set<string>;
  licenses: Set<string>;
  /** True when anything narrows what a member sees. */
  narrows: boolean;
}

export function compilePolicy(policy: Policy): CompiledPolicy {
  const q = policy.libraryFilters.quality;
  const disabled = new Set((Object.keys(policy.sourceTypes) as PolicySourceType[]).filter((t) => !policy.sourceTypes[t].enabled));
  const isId = (s: string) => s.startsWith('/');
  const mode = policy.libraryFilters.mode;
  const narrowsQuality =
    q.requireVerified ||
    q.minTrustScore !== null ||
    q.maxAgeDays > 0 ||
    q.blockedLibraries.length > 0 ||
    q.repoFilters.minStars > 0 ||
    q.repoFilters.allowedLicenses.length > 0;
  return {
    policy,
    disabled,
    mode,
    blockedIds: new Set(q.blockedLibraries.filter(isId).map(normId)),
    blockedDomains: q.blockedLibraries
      .filter((s) => !isId(s))
      .map(normDomain)
      .filter(Boolean),
    excepted: new Set(q.exceptedLibraries.map(normId)),
    allowed: new Set(policy.libraryFilters.select.allowedLibraries.map(normId)),
    licenses: new Set(q.repoFilters.allowedLicenses.map((l) => l.toLowerCase())),
    narrows: disabled.size > 0 || mode === 'select' || narrowsQuality,
  };
}

function normId(s: string): string {
  return s.trim().replace(/\/+$/, '').toLowerCase();
}

function normDomain(s: string): string {
  let d = s.trim().toLowerCase();
  try {
    if (/^[a-z]+:\/\//.test(d)) d = new URL(d).hostname;
  } catch {
    /* keep as typed */
  }
  return d
    .replace(/^\*\./, '')
    .replace(/^www\./, '')
    .replace(/\/.*$/, '');
}

// URL parsing is the one costly step of a check; the same few URLs recur on every search.
const hosts = new Map<string, string | null>();

function hostOf(url: string | null): string | null {
  if (!url) return null;
  const known = hosts.get(url);
  if (known !== undefined) return known;
  let host: string | null = null;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    host = null;
  }
  if (hosts.size >= 50_000) hosts.clear();
  hosts.set(url, host);
  return host;
}

function domainMatches(host: string, domain: string): boolean {
  return host === domain || host.endsWith(`.${domain}`) || host === `www.${domain}`;
}

/** True when a blocked domain names one of the library's URLs (source, docs site, docs repo) or its ID's owner segment. */
function blockedByDomain(c: CompiledPolicy, lib: Library): boolean {
  if (c.blockedDomains.length === 0) return false;
  const hosts = [hostOf(lib.sourceUrl), hostOf(lib.docsSiteUrl), hostOf(lib.docsRepoUrl), lib.id.split('/')[1]?.toLowerCase() ?? null];
  return c.blockedDomains.some((d) => hosts.some((h) => h !== null && domainMatches(h, d)));
}

const DAY_MS = 86_400_000;

/**
 * Whether a reader in `teamspaceId` (null: an anonymous caller) may be served `lib` under the
 * compiled policy of that teamspace (for anonymous callers, the default teamspace's).
 * - A `teamspace` library is read only by its owner teamspace and the teamspaces granted it; an
 *   `instance` library by every teamspace and by anonymous callers.
 * - A disabled source type hides its libraries.
 * - The teamspace's own private libraries pass the library filters (quality or select); those
 *   filters apply to everything else it may read: instance-wide and granted libraries.
 */
export function libraryAllowed(c: CompiledPolicy, teamspaceId: number | null, lib: Library, nowMs: number): boolean {
  const own = teamspaceId !== null && lib.teamspaceId === teamspaceId;
  if (lib.visibility !== 'instance' && !own && !(teamspaceId !== null && lib.grants.includes(teamspaceId))) return false;
  if (c.disabled.size > 0 && c.disabled.has(policySourceTypeOf(lib))) return false;
  if (own && lib.visibility !== 'instance') return true;
  const id = lib.id.toLowerCase();
  if (c.mode === 'select') return c.allowed.has(id);
  if (c.excepted.has(id)) return true;
  const q = c.policy.libraryFilters.quality;
  if (c.blockedIds.has(id) || blockedByDomain(c, lib)) return false;
  if (q.requireVerified && !lib.verified) return false;
  if (q.minTrustScore !== null && (lib.trustScore ?? -1) < q.minTrustScore) return false;
  if (q.maxAgeDays > 0) {
    const updated = Date.parse(lib.updatedAt);
    if (!(updated >= nowMs - q.maxAgeDays * DAY_MS)) return false;
  }
  if (lib.sourceType === 'repo') {
    if (q.repoFilters.minStars > 0 && (lib.stars ?? 0) < q.repoFilters.minStars) return false;
    if (c.licenses.size > 0 && !(lib.license && c.licenses.has(lib.license.toLowerCase()))) return false;
  }
  return true;
}
