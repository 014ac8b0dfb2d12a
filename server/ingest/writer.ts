import { createHash } from 'node:crypto';
import type { Stores } from '../store/stores.ts';
import type { SnippetRow } from '../store/snippets.ts';
import type { Embedder } from '../embed/types.ts';
import type { LibraryMeta, SnippetInput, StoredSnippet } from '../../lib/model.ts';
import type { VersionKind } from '../store/libraries.ts';
import { countTokens } from './tokens.ts';
import { indexColumns } from '../search/text.ts';
import { embeddingText } from '../embed/text.ts';
import { TermChunkBuilder } from './term-chunks.ts';
import { addStoredSnippets, addToTermIndex, flushTermChunk } from './term-index.ts';

export interface BuildOptions {
  /** Version tag; '' (default) is the library's current documentation. */
  tag?: string;
  /** The job doing the build; lets a restarted job find and continue its build. */
  jobId?: number | null;
  /** Continue this job's unfinished build instead of starting over (crawls resume page by page). */
  resume?: boolean;
  /** `source`: a repository's dynamic source-code index, committed with its docs build (docs/git.md). */
  kind?: VersionKind;
}

/** A stored snippet copied into a new build as it is (a git refresh reuses the snippets of unchanged files). */
export interface StoredCopy {
  snippet: StoredSnippet;
  embedding: Float32Array | null;
}

/**
 * One library version being written. Snippets go to a 'building' version that no reader sees;
 * commit() swaps it in atomically, abort() throws it away, so a failed import or crawl never
 * touches what was served before.
 */
export class VersionBuild {
  private done = false;
  private readonly terms = new TermChunkBuilder();
  /** The served version whose vectors reuseVectors takes (null: none); undefined until the first batch. */
  private served: number | null | undefined;
  /** The batches being stored, one after the other (see write()). */
  private writing: Promise<void> = Promise.resolve();

  private constructor(
    private readonly store: Stores,
    private readonly embedder: Embedder | null,
    readonly versionId: number,
    private readonly meta: LibraryMeta,
    private readonly now: () => string,
    private readonly onCommit: CommitHook | null,
    readonly kind: VersionKind,
    private seen: Set<string>,
    private position: number,
    private tokens: number,
    private count: number,
  ) {}

  /** The build of a 'building' version, with what it holds already (a resumed build continues after it). */
  static async open(
    store: Stores,
    embedder: Embedder | null,
    versionId: number,
    meta: LibraryMeta,
    now: () => string,
    onCommit: CommitHook | null = null,
    kind: VersionKind = 'docs',
  ): Promise<VersionBuild> {
    const seen = await store.snippets.hashes(versionId);
    const totals = await store.snippets.totals(versionId);
    const build = new VersionBuild(store, embedder, versionId, meta, now, onCommit, kind, seen, totals.maxPosition + 1, totals.tokens, totals.snippets);
    // A resumed build: index what the interrupted run stored after its last term chunk.
    if (totals.snippets > 0) await addStoredSnippets(store, versionId, build.terms);
    return build;
  }

  get snippetCount(): number {
    return this.count;
  }

  /** Normalizes, embeds and stores one batch in one transaction. Exact duplicates within the version are skipped. Returns how many were stored. */
  async add(snippets: SnippetInput[]): Promise<number> {
    if (this.done) throw new Error('build already finished');
    const rows: SnippetRow[] = [];
    for (const s of snippets) {
      const row = toRow(s, this.position);
      const key = `${row.kind}:${row.contentHash}`;
      if (this.seen.has(key)) continue;
      this.seen.add(key);
      this.position++;
      rows.push(row);
    }
    if (rows.length === 0) return 0;
    // A deferred embedder (the sentence model) is left to the embed job: writing stays lexical-first,
    // and text the served version already embedded keeps its vector.
    if (this.embedder?.deferred) await this.reuseVectors(rows);
    else if (this.embedder) {
      const vectors = await this.embedder.embed(rows.map(embeddingText));
      rows.forEach((r, i) => (r.vector = vectors[i] ?? null));
    }
    return this.write(rows);
  }

  /**
   * Stores snippets of another version of the same library as they are, with their embeddings
   * (nothing is embedded again). Exact duplicates are skipped as in add(). Returns how many were stored.
   */
  async addStored(copies: StoredCopy[]): Promise<number> {
    if (this.done) throw new Error('build already finished');
    const rows: SnippetRow[] = [];
    for (const { snippet: s, embedding } of copies) {
      const key = `${s.kind}:${s.contentHash}`;
      if (this.seen.has(key)) continue;
      this.seen.add(key);
      const row = {
        kind: s.kind,
        sourceId: s.sourceId,
        title: s.title,
        description: s.description,
        language: s.language,
        pageTitle: s.pageTitle,
        breadcrumb: s.breadcrumb,
        content: s.content,
        codeList: s.kind === 'code' ? s.codeList : null,
        tokens: s.tokens,
        contentHash: s.contentHash,
        position: this.position++,
        isDynamic: s.isDynamic,
        sourceFile: s.sourceFile,
      };
      rows.push({ ...row, fts: indexColumns(row), vector: this.embedder && embedding && embedding.length === this.embedder.dims ? embedding : null });
    }
    return rows.length ? this.write(rows) : 0;
  }

  /**
   * Gives rows the vectors of the served version's snippets at the same address with the same
   * embedded text: a re-import or re-crawl embeds only what changed. The float copies belong to the
   * current embedder (they are cleared when it changes).
   */
  private async reuseVectors(rows: SnippetRow[]): Promise<void> {
    if (this.served === undefined) {
      // Looked up once per build: the version served when it began.
      const tag = this.kind === 'docs' ? (await this.store.libraries.version(this.versionId))?.tag : undefined;
      const current = tag === undefined ? null : await this.store.libraries.currentVersion(this.meta.id, tag);
      this.served = current && current.id !== this.versionId ? current.id : null;
    }
    if (this.served === null) return;
    const known = new Map<string, Float32Array>();
    for (const { snippet, embedding } of await this.store.snippets.embeddedAt(
      this.served,
      rows.map((r) => r.sourceId),
    )) {
      if (embedding.length === this.embedder!.dims) known.set(`${snippet.sourceId}\u0000${embeddingText(snippet)}`, embedding);
    }
    for (const r of rows) r.vector = known.get(`${r.sourceId}\u0000${embeddingText(r)}`) ?? null;
  }

  /**
   * Stores a batch and adds it to the term index. Batches of one build are stored one after the
   * other (a crawl's workers add pages at once): the term index takes documents in id order, so one
   * batch's rows must all be added before the next batch's ids exist.
   */
  private write(rows: SnippetRow[]): Promise<number> {
    const run = this.writing.then(async () => {
      // A source partition stays out of the full-text index: that index chooses libraries, and code must not sway it.
      const ids = await this.store.snippets.insertBatch(this.versionId, rows, this.embedder ? this.store.vectors.table : null, {
        fts: this.kind === 'docs',
      });
      await addToTermIndex(
        this.store,
        this.versionId,
        this.terms,
        rows.map((r, i) => ({ id: ids[i]!, columns: r.fts })),
      );
      for (const r of rows) this.tokens += r.tokens;
      this.count += rows.length;
      return rows.length;
    });
    // A failed batch fails its own caller; the next batch still runs.
    this.writing = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Swaps the new version in and purges the one it replaces; `meta` replaces the metadata given at begin (known only at the end, such as a crawled site's name). */
  async commit(meta: LibraryMeta = this.meta, source: VersionBuild | null = null): Promise<{ snippets: number; tokens: number }> {
    if (this.done) throw new Error('build already finished');
    if (source && (source.kind !== 'source' || source.done)) throw new Error('a source partition must be an unfinished source build');
    this.done = true;
    await this.writing;
    await flushTermChunk(this.store, this.versionId, this.terms);
    await this.store.libraries.markSearchIndexed(this.versionId);
    if (source) {
      source.done = true;
      await source.writing;
      await flushTermChunk(this.store, source.versionId, source.terms);
      await this.store.libraries.markSearchIndexed(source.versionId);
    }
    const partition = source ? { versionId: source.versionId, tokens: source.tokens, snippets: source.count } : undefined;
    const retired = await this.store.libraries.swapIn(this.versionId, meta, { tokens: this.tokens, snippets: this.count }, this.now(), partition);
    for (const id of retired) await this.store.libraries.deleteVersion(id);
    // Embedded while written (or copied with their vectors): searches use the vectors at once.
    if (this.embedder) for (const id of source ? [this.versionId, source.versionId] : [this.versionId]) await this.store.vectors.markComplete(id);
    void this.onCommit?.(this.versionId, meta.id);
    return { snippets: this.count, tokens: this.tokens };
  }

  /** Throws the unfinished version away; what was served before stays served. */
  async abort(): Promise<void> {
    if (this.done) return;
    this.done = true;
    await this.writing;
    await this.store.libraries.deleteVersion(this.versionId);
  }
}

/** Called after a version was swapped in (the composition root queues learning its ranking model). */
/** Told of each version swapped in (queues its follow-up jobs); it handles its own failures. */
export type CommitHook = (versionId: number, libraryId: string) => Promise<void> | void;

/** Creates builds; the one place where snippets enter the store. */
export class LibraryWriter {
  constructor(
    private readonly store: Stores,
    private readonly embedder: Embedder | null,
    private readonly now: () => string = () => new Date().toISOString(),
    private readonly onCommit: CommitHook | null = null,
  ) {}

  async begin(meta: LibraryMeta, options: BuildOptions = {}): Promise<VersionBuild> {
    const tag = options.tag ?? '';
    const jobId = options.jobId ?? null;
    const kind = options.kind ?? 'docs';
    if (jobId !== null) {
      const previous = await this.store.libraries.buildingVersionForJob(jobId, kind);
      if (previous && options.resume && previous.tag === tag)
        return VersionBuild.open(this.store, this.embedder, previous.id, meta, this.now, this.onCommit, kind);
      if (previous) await this.store.libraries.deleteVersion(previous.id);
    }
    // The version and, for a new library, the row its foreign key needs (invisible to search until the first swap).
    const versionId = await this.store.libraries.createBuild(meta, tag, jobId, this.now(), kind);
    return VersionBuild.open(this.store, this.embedder, versionId, meta, this.now, this.onCommit, kind);
  }
}

function hash(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}

export function toRow(s: SnippetInput, position: number): SnippetRow {
  if (s.kind === 'code') {
    const code = s.codeList.map((c) => c.code).join('\n');
    const text = [s.title, s.description, code].join('\n');
    const row = {
      kind: 'code' as const,
      sourceId: s.sourceId,
      title: s.title,
      description: s.description,
      language: s.language,
      pageTitle: s.pageTitle,
      breadcrumb: s.breadcrumb ?? '',
      content: '',
      codeList: s.codeList,
      tokens: s.tokens ?? countTokens(text),
      contentHash: hash(`${s.title}\u0000${s.description}\u0000${code}`),
      position,
      isDynamic: s.isDynamic ?? false,
      sourceFile: s.sourceFile ?? null,
    };
    return { ...row, fts: indexColumns(row), vector: null };
  }
  const title = s.title ?? lastCrumb(s.breadcrumb) ?? s.pageTitle ?? '';
  const row = {
    kind: 'info' as const,
    sourceId: s.sourceId,
    title,
    description: '',
    language: '',
    pageTitle: s.pageTitle ?? '',
    breadcrumb: s.breadcrumb ?? '',
    content: s.content,
    codeList: null,
    tokens: s.tokens ?? countTokens(s.content),
    contentHash: hash(s.content),
    position,
    isDynamic: false,
    sourceFile: s.sourceFile ?? null,
  };
  return { ...row, fts: indexColumns(row), vector: null };
}

function lastCrumb(breadcrumb: string | undefined): string | undefined {
  if (!breadcrumb) return undefined;
  const parts = breadcrumb.split(/\s+>\s+/);
  return parts[parts.length - 1];
}
