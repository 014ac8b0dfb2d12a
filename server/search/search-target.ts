import type { LibraryVersion } from '../../lib/model.ts';
import type { CatalogEntry } from './catalog.ts';
import type { LibraryChoice } from './select.ts';
import type { VersionTarget } from './pipeline.ts';
import type { VersionStatus } from './answer-types.ts';
import { chooseVersion } from './versions.ts';

/** One selected library with the version it serves and what it reports about the request. */
export interface SearchTarget {
  entry: CatalogEntry;
  version: LibraryVersion;
  /** The libraryId on its snippets: the library ID plus the served tag when one was matched. */
  label: string;
  /** Version asked of this library, null when none. */
  requested: string | null;
  served: string | null;
  status: VersionStatus | null;
  reason: string;
  /** The version parameter could not apply (library-less question naming several or no products). */
  versionIgnored?: boolean;
}

/** The version served for one chosen library: the resolver of both endpoints (versions.ts chooseVersion) over its served versions. */
export function searchTarget(c: LibraryChoice): SearchTarget {
  const e = c.entry;
  // Selection only chooses libraries with documentation to serve (catalog.ts servable).
  const { version, requested, status } = chooseVersion(e.base ? [e.base, ...e.tagged] : e.tagged, c.requested, e.library.branch)!;
  const label = version.tag ? `${e.library.id}/${version.tag}` : e.library.id;
  // Served as asked: the matched tag, or the requested version when the current documentation's branch pins it.
  const served = status === 'verified' || status === 'prerelease' ? version.tag || requested : null;
  return { entry: e, version, label, requested, served, status, reason: c.reason };
}

/** The version a target answers from, as the pipeline takes it. */
export function versionTarget(t: SearchTarget): VersionTarget {
  return { versionId: t.version.id, libraryId: t.label, dynamicVersionId: t.version.dynamicVersionId };
}
