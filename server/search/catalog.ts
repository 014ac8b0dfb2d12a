import type { Store } from '../store/index.ts';
import type { Library, LibraryVersion } from '../../lib/model.ts';
import { MentionIndex, namesOf, type NameKey } from './names.ts';
import { packageNameKeys } from './package-names.ts';
import { packagesFor } from './models.ts';
import { defaultVersionOf } from './versions.ts';

/** One library as search sees it: its names and the versions it can serve. */
export interface CatalogEntry {
  library: Library;
  keys: NameKey[];
  /** The current documentation (tag ''), when indexed and ready. */
  base: LibraryVersion | null;
  /** Ready tagged versions (v4.29.1, ...). */
  tagged: LibraryVersion[];
}

/** True when the library has documentation to serve. */
export function servable(e: CatalogEntry): boolean {
  return (e.base !== null && e.base.totalSnippets > 0) || e.tagged.some((v) => v.totalSnippets > 0);
}

/** The version served when no version is asked for (versions.ts defaultVersionOf). */
export function defaultVersion(e: CatalogEntry): LibraryVersion | null {
  return defaultVersionOf(e.base ? [e.base, ...e.tagged] : e.tagged);
}

/**
 * The library catalogue, rebuilt only when the store's catalogue stamp changes (a library or a
 * served version added, removed or swapped), so a search does not re-read every library.
 */
export class Catalog {
  private stamp = '';
  private entries: CatalogEntry[] = [];
  private byId = new Map<string, CatalogEntry>();
  private byVersion = new Map<number, CatalogEntry>();
  private mentionIndex: MentionIndex<CatalogEntry> | null = null;

  constructor(private readonly store: Store) {}

  all(): CatalogEntry[] {
    this.refresh();
    return this.entries;
  }

  get(id: string): CatalogEntry | null {
    this.refresh();
    return this.byId.get(id) ?? this.byId.get(id.toLowerCase()) ?? null;
  }

  /** Names of every library, indexed for reading questions (built on first use after a change). */
  mentions(): MentionIndex<CatalogEntry> {
    this.refresh();
    return (this.mentionIndex ??= new MentionIndex(this.entries.map((e) => ({ item: e, keys: e.keys }))));
  }

  /** The entry owning a served version id. */
  ofVersion(versionId: number): CatalogEntry | null {
    this.refresh();
    return this.byVersion.get(versionId) ?? null;
  }

  /**
   * Each library also goes by the package names its served version's documents install
   * (`react-query` for TanStack Query), unless another library goes by that name itself.
   */
  private addPackageNames(entries: CatalogEntry[]): void {
    const own = new Set(entries.flatMap((e) => e.keys.map((k) => k.key)));
    for (const e of entries) {
      const served = defaultVersion(e);
      if (!served) continue;
      const names = new Set(e.keys.map((k) => k.key));
      const extra = packageNameKeys(e.library, packagesFor(this.store, served.id)).filter((k) => !own.has(k.key) && !names.has(k.key));
      if (extra.length) e.keys = [...e.keys, ...extra];
    }
  }

  /** True while the current synchronous run has checked the stamp (a selection asks several times). */
  private checked = false;

  private refresh(): void {
    // Once per synchronous run (a search selection asks five or more times; the stamp query was 4%
    // of the request thread): a change committed meanwhile is seen by the next run, as if it had
    // come just after this one.
    if (this.checked) return;
    this.checked = true;
    queueMicrotask(() => (this.checked = false));
    const stamp = this.store.probe.catalogStamp();
    if (stamp === this.stamp) return;
    const versions = new Map<string, LibraryVersion[]>();
    for (const v of this.store.libraries.allCurrentVersions()) {
      if (v.state !== 'ready') continue;
      const list = versions.get(v.libraryId) ?? [];
      list.push(v);
      versions.set(v.libraryId, list);
    }
    const entries: CatalogEntry[] = [];
    for (const library of this.store.libraries.list()) {
      const vs = versions.get(library.id) ?? [];
      entries.push({ library, keys: namesOf(library), base: vs.find((v) => v.tag === '') ?? null, tagged: vs.filter((v) => v.tag !== '') });
    }
    this.addPackageNames(entries);
    this.entries = entries;
    this.mentionIndex = null;
    this.byId = new Map();
    this.byVersion = new Map();
    for (const e of entries) {
      this.byId.set(e.library.id, e);
      if (!this.byId.has(e.library.id.toLowerCase())) this.byId.set(e.library.id.toLowerCase(), e);
      if (e.base) this.byVersion.set(e.base.id, e);
      for (const v of e.tagged) this.byVersion.set(v.id, e);
    }
    this.stamp = stamp;
  }
}
