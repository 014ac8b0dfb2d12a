import type { Library, LibraryVersion } from '../../lib/model.ts';
import type { SearchReads } from '../store/version-reads.ts';
import { MentionIndex, namesOf, type NameKey } from './names.ts';
import { packageNameKeys } from './package-names.ts';
import { packagesStep } from './models.ts';
import { runSync, wait, type Step } from './read-steps.ts';
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

/** What selection reads of the catalogue: one state of it (CatalogView), or SQLite's catalogue that refreshes itself (Catalog). */
export interface CatalogReads {
  all(): CatalogEntry[];
  get(id: string): CatalogEntry | null;
  /** Names of every library, indexed for reading questions. */
  mentions(): MentionIndex<CatalogEntry>;
  /** The entry owning a served version id. */
  ofVersion(versionId: number): CatalogEntry | null;
}

/** One state of the catalogue, as of one catalogue stamp; never changed once built, so a request may keep it across its awaits. */
export class CatalogView implements CatalogReads {
  private readonly byId = new Map<string, CatalogEntry>();
  private readonly byVersion = new Map<number, CatalogEntry>();
  private mentionIndex: MentionIndex<CatalogEntry> | null = null;

  constructor(
    readonly stamp: string,
    private readonly entries: CatalogEntry[],
    /** When each version's model was stored, of every version in `entries` that has one (read with the stamp). */
    private readonly modelTimes: ReadonlyMap<number, string> = new Map(),
  ) {
    for (const e of entries) {
      this.byId.set(e.library.id, e);
      if (!this.byId.has(e.library.id.toLowerCase())) this.byId.set(e.library.id.toLowerCase(), e);
      if (e.base) this.byVersion.set(e.base.id, e);
      for (const v of e.tagged) this.byVersion.set(v.id, e);
    }
  }

  all(): CatalogEntry[] {
    return this.entries;
  }

  get(id: string): CatalogEntry | null {
    return this.byId.get(id) ?? this.byId.get(id.toLowerCase()) ?? null;
  }

  /** Built on first use: a request that reads no question needs none. */
  mentions(): MentionIndex<CatalogEntry> {
    return (this.mentionIndex ??= new MentionIndex(this.entries.map((e) => ({ item: e, keys: e.keys }))));
  }

  ofVersion(versionId: number): CatalogEntry | null {
    return this.byVersion.get(versionId) ?? null;
  }

  /**
   * When a version of the view had its model stored (null: none), as of the view's stamp, which
   * changes with every model stored or removed; undefined for a version the view does not hold.
   */
  modelBuiltAt(versionId: number): string | null | undefined {
    return this.byVersion.has(versionId) ? (this.modelTimes.get(versionId) ?? null) : undefined;
  }
}

/**
 * The library catalogue, rebuilt only when the store's catalogue stamp changes (a library or a
 * served version added, removed or swapped), so a search does not re-read every library. On SQLite
 * it refreshes itself on use (once per synchronous run); on PostgreSQL a request runs viewStep inside
 * its read snapshot and answers from the view it returns: a node-local mirror that a version swapped
 * in through another node replaces at this node's next request.
 */
export class Catalog implements CatalogReads {
  private view = new CatalogView('', []);

  constructor(private readonly reads: SearchReads) {}

  all(): CatalogEntry[] {
    return this.current().all();
  }

  get(id: string): CatalogEntry | null {
    return this.current().get(id);
  }

  mentions(): MentionIndex<CatalogEntry> {
    return this.current().mentions();
  }

  ofVersion(versionId: number): CatalogEntry | null {
    return this.current().ofVersion(versionId);
  }

  /** True while the current synchronous run has checked the stamp (a selection asks several times). */
  private checked = false;

  /** SQLite's: the view, its stamp checked once per synchronous run (the reads must answer at once). */
  private current(): CatalogView {
    // Once per synchronous run (a search selection asks five or more times; the stamp query was 4%
    // of the request thread): a change committed meanwhile is seen by the next run, as if it had
    // come just after this one.
    if (this.checked) return this.view;
    this.checked = true;
    queueMicrotask(() => (this.checked = false));
    return runSync(this.viewStep());
  }

  /** The view last read (by any request), without reading the stamp; null before the first read. */
  held(): CatalogView | null {
    return this.view.stamp === '' ? null : this.view;
  }

  /** The catalogue as of the reads' state: the one held when the stamp is unchanged, else rebuilt (and held). */
  *viewStep(): Step<CatalogView> {
    const stamp = yield* wait(this.reads.catalogStamp());
    if (stamp === this.view.stamp) return this.view;
    const versions = new Map<string, LibraryVersion[]>();
    for (const v of yield* wait(this.reads.currentVersions())) {
      if (v.state !== 'ready') continue;
      const list = versions.get(v.libraryId) ?? [];
      list.push(v);
      versions.set(v.libraryId, list);
    }
    const entries: CatalogEntry[] = [];
    for (const library of yield* wait(this.reads.libraries())) {
      const vs = versions.get(library.id) ?? [];
      entries.push({ library, keys: namesOf(library), base: vs.find((v) => v.tag === '') ?? null, tagged: vs.filter((v) => v.tag !== '') });
    }
    // Every version's model time in one read: the package names need the served ones', and on
    // PostgreSQL a request ranks with the view's instead of reading each version's again.
    const builtAt = yield* wait(this.reads.modelsBuiltAt(entries.flatMap((e) => [...(e.base ? [e.base.id] : []), ...e.tagged.map((v) => v.id)])));
    yield* addPackageNames(this.reads, entries, builtAt);
    this.view = new CatalogView(stamp, entries, builtAt);
    return this.view;
  }
}

/**
 * Each library also goes by the package names its served version's documents install
 * (`react-query` for TanStack Query), unless another library goes by that name itself.
 */
function* addPackageNames(reads: SearchReads, entries: CatalogEntry[], builtAt: ReadonlyMap<number, string>): Step<void> {
  const own = new Set(entries.flatMap((e) => e.keys.map((k) => k.key)));
  const served = new Map(entries.map((e) => [e, defaultVersion(e)]));
  // The model times of every version, read at once by the caller (on PostgreSQL a statement per
  // library was a round trip each); the models are then read only when not parsed already (models.ts).
  const known = { ...reads, modelBuiltAt: (versionId: number) => builtAt.get(versionId) ?? null };
  for (const e of entries) {
    const version = served.get(e);
    if (!version) continue;
    const names = new Set(e.keys.map((k) => k.key));
    const extra = packageNameKeys(e.library, yield* packagesStep(known, version.id)).filter((k) => !own.has(k.key) && !names.has(k.key));
    if (extra.length) e.keys = [...e.keys, ...extra];
  }
}
