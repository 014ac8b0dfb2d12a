/** Writing a version's term index chunk by chunk: used by the writer as it stores batches and by the start-up backfill. */
import type { Store } from '../store/index.ts';
import { indexColumns } from '../search/text.ts';
import type { TermChunkBuilder } from './term-chunks.ts';

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
