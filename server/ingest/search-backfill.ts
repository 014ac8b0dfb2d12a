import type { Store } from '../store/index.ts';
import type { Logger } from '../log.ts';
import { indexColumns } from '../search/text.ts';
import { TermChunkBuilder } from './term-chunks.ts';

/** Adds a document to the builder, storing the open chunk first when the document does not fit it. */
export function addToTermIndex(store: Store, versionId: number, builder: TermChunkBuilder, id: number, columns: Parameters<TermChunkBuilder['add']>[1]): void {
  if (!builder.fits(id)) flushTermChunk(store, versionId, builder);
  builder.add(id, columns);
}

export function flushTermChunk(store: Store, versionId: number, builder: TermChunkBuilder): void {
  const chunk = builder.take();
  if (chunk) store.terms.writeChunk(versionId, chunk);
}

/** Feeds the builder the version's stored snippets that its term index does not hold yet (a resumed build, an older version). */
export function addStoredSnippets(store: Store, versionId: number, builder: TermChunkBuilder): number {
  let after = store.terms.indexedThrough(versionId);
  let added = 0;
  for (;;) {
    const page = store.snippets.list(versionId, 1000, after);
    if (page.length === 0) return added;
    for (const s of page) addToTermIndex(store, versionId, builder, s.id, indexColumns(s));
    added += page.length;
    after = page[page.length - 1]!.id;
  }
}

/**
 * Completes the derived search data of served versions written before it existed (migration 009):
 * their term index, and the copy of each snippet's embedding in its row (taken from the vector
 * table unless the embedder changed, in which case the re-embed job writes both). Runs once at
 * start-up, before anything is served; an interrupted run continues where it stopped.
 */
export function backfillSearchIndex(store: Store, log: Logger, options: { copyVectors: boolean }): void {
  const versions = store.libraries.searchUnindexedVersions();
  if (versions.length === 0) return;
  log.info({ versions: versions.length }, 'building the search index of existing library versions');
  const t0 = Date.now();
  let docs = 0;
  for (const versionId of versions) {
    const builder = new TermChunkBuilder();
    docs += addStoredSnippets(store, versionId, builder);
    flushTermChunk(store, versionId, builder);
    if (options.copyVectors) {
      const ids = store.snippets.idsWithoutEmbedding(versionId);
      for (let i = 0; i < ids.length; i += 1000) store.snippets.setEmbeddings(store.vectors.vectorsOf(ids.slice(i, i + 1000)));
    }
    store.libraries.markSearchIndexed(versionId);
  }
  log.info({ versions: versions.length, snippets: docs, ms: Date.now() - t0 }, 'search index built');
}
