import type { Store } from '../store/index.ts';
import type { Logger } from '../log.ts';
import { TermChunkBuilder } from './term-chunks.ts';
import { addStoredSnippets, flushTermChunk } from './term-index.ts';

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
