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
 * Builds the term index of served versions written before it existed (migration 009). Runs once at
 * start-up, before anything is served; an interrupted run continues where it stopped. (Their
 * embeddings' float copies and 8-bit vectors come from the re-embed job that the new vector table
 * format starts.)
 */
export function backfillSearchIndex(store: Store, log: Logger): void {
  const versions = store.libraries.searchUnindexedVersions();
  if (versions.length === 0) return;
  log.info({ versions: versions.length }, 'building the term index of existing library versions');
  const t0 = Date.now();
  let docs = 0;
  for (const versionId of versions) {
    const builder = new TermChunkBuilder();
    docs += addStoredSnippets(store, versionId, builder);
    flushTermChunk(store, versionId, builder);
    store.libraries.markSearchIndexed(versionId);
  }
  log.info({ versions: versions.length, snippets: docs, ms: Date.now() - t0 }, 'term index built');
}
