import type { Stores } from '../store/stores.ts';
import type { Logger } from '../log.ts';
import { TermChunkBuilder } from './term-chunks.ts';
import { addToTermIndex, flushTermChunk } from './term-index.ts';
import { indexColumns } from '../search/text.ts';

/**
 * Builds the term index of served versions written before it existed (migration 009) or before it
 * held cosine norms (migration 010), and rewrites their full-text rows so that both indexes hold
 * the same tokens (joined identifiers, server/search/text.ts). Runs once at start-up, before
 * anything is served; an interrupted run continues where it stopped. (Their embeddings' float
 * copies and 8-bit vectors come from the re-embed job that the new vector table format starts.)
 */
export async function backfillSearchIndex(store: Stores, log: Logger): Promise<void> {
  const versions = await store.libraries.searchUnindexedVersions();
  if (versions.length === 0) return;
  log.info({ versions: versions.length }, 'building the term index of existing library versions');
  const t0 = Date.now();
  let docs = 0;
  for (const versionId of versions) {
    const builder = new TermChunkBuilder();
    docs += await reindex(store, versionId, builder);
    await flushTermChunk(store, versionId, builder);
    await store.libraries.markSearchIndexed(versionId);
  }
  log.info({ versions: versions.length, snippets: docs, ms: Date.now() - t0 }, 'term index built');
}

/**
 * One pass over a version's snippets: each one's full-text row is rewritten, and those its term
 * index does not hold yet (all, or those after an interrupted run's last chunk) are added to it.
 */
async function reindex(store: Stores, versionId: number, builder: TermChunkBuilder): Promise<number> {
  const indexed = await store.terms.indexedThrough(versionId);
  let added = 0;
  for (let after = 0; ; ) {
    const page = await store.snippets.list(versionId, 1000, after);
    if (page.length === 0) return added;
    const rows = page.map((s) => ({ id: s.id, fts: indexColumns(s) }));
    await store.snippets.rewriteFts(versionId, rows);
    const fresh = rows.filter((r) => r.id > indexed);
    await addToTermIndex(
      store,
      versionId,
      builder,
      fresh.map((r) => ({ id: r.id, columns: r.fts })),
    );
    added += fresh.length;
    after = page[page.length - 1]!.id;
  }
}
