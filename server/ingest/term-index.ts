/** Writing a version's term index chunk by chunk: used by the writer as it stores batches and by the start-up backfill. */
import type { Stores } from '../store/stores.ts';
import { indexColumns } from '../search/text.ts';
import type { TermChunkBuilder } from './term-chunks.ts';

type Columns = Parameters<TermChunkBuilder['add']>[1];

/**
 * Adds documents (in increasing id order) to the builder, storing the open chunk whenever the next
 * document does not fit it. Awaits only at a chunk's end: a batch of thousands of documents costs
 * one or two store calls, not a promise each.
 */
export async function addToTermIndex(
  store: Pick<Stores, 'terms'>,
  versionId: number,
  builder: TermChunkBuilder,
  docs: Iterable<{ id: number; columns: Columns }>,
): Promise<void> {
  for (const { id, columns } of docs) {
    if (!builder.fits(id)) await flushTermChunk(store, versionId, builder);
    builder.add(id, columns);
  }
}

export async function flushTermChunk(store: Pick<Stores, 'terms'>, versionId: number, builder: TermChunkBuilder): Promise<void> {
  const chunk = builder.take();
  if (chunk) await store.terms.writeChunk(versionId, chunk);
}

/** Feeds the builder the version's stored snippets that its term index does not hold yet (a resumed build, an older version). */
export async function addStoredSnippets(store: Pick<Stores, 'terms' | 'snippets'>, versionId: number, builder: TermChunkBuilder): Promise<number> {
  let after = await store.terms.indexedThrough(versionId);
  let added = 0;
  for (;;) {
    const page = await store.snippets.list(versionId, 1000, after);
    if (page.length === 0) return added;
    await addToTermIndex(
      store,
      versionId,
      builder,
      page.map((s) => ({ id: s.id, columns: indexColumns(s) })),
    );
    added += page.length;
    after = page[page.length - 1]!.id;
  }
}
