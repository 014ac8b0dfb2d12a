import type { Store } from '../store/index.ts';
import type { Logger } from '../log.ts';
import { indexColumns } from '../search/text.ts';
import { IndexChunkBuilder, quantizeChunk } from './index-chunks.ts';

/** Adds a document to the builder, storing the open chunk first when the document does not fit it. */
export function addToIndex(store: Store, versionId: number, builder: IndexChunkBuilder, id: number, columns: Parameters<IndexChunkBuilder['add']>[1], vector: Float32Array | null): void {
  if (!builder.fits(id)) flushChunk(store, versionId, builder);
  builder.add(id, columns, vector);
}

export function flushChunk(store: Store, versionId: number, builder: IndexChunkBuilder): void {
  const chunk = builder.take();
  if (chunk) store.chunks.writeChunk(versionId, chunk);
}

/**
 * Feeds the builder the version's stored snippets that its chunks do not hold yet (a resumed
 * build, an older version), with their vectors from the vector table when `withVectors`.
 */
export function addStoredSnippets(store: Store, versionId: number, builder: IndexChunkBuilder, withVectors: boolean): number {
  let after = store.chunks.indexedThrough(versionId);
  let added = 0;
  for (;;) {
    const page = store.snippets.list(versionId, 1000, after);
    if (page.length === 0) return added;
    const vectors = withVectors ? new Map(store.vectors.vectorsOf(page.map((s) => s.id)).map((v) => [v.id, v.vector])) : new Map<number, Float32Array>();
    for (const s of page) addToIndex(store, versionId, builder, s.id, indexColumns(s), vectors.get(s.id) ?? null);
    added += page.length;
    after = page[page.length - 1]!.id;
  }
}

/**
 * Gives chunks without vectors the 8-bit copies of their snippets' vectors from the vector table:
 * after a re-embed job has refilled it, and for chunks written before (or without) an embedder.
 * A chunk whose snippets have no vector yet stays without (the vector table's KNN serves it).
 */
export function fillChunkVectors(store: Store): number {
  let filled = 0;
  for (const c of store.chunks.chunksWithoutVectors()) {
    const ids = store.snippets.idsBetween(c.versionId, c.baseId, c.lastId);
    const found = store.vectors.vectorsOf(ids);
    if (found.length < ids.length) continue;
    const v = quantizeChunk(found.map((f) => ({ offset: f.id - c.baseId, vector: f.vector })), c.lastId - c.baseId + 1);
    if (!v) continue;
    store.chunks.setVectors(c.versionId, c.baseId, v);
    filled++;
  }
  return filled;
}

/**
 * Completes the index chunks of served versions written before they existed (migration 009):
 * lengths and postings, and the 8-bit vectors when an embedder's vectors are stored (`withVectors`
 * is false when the vector table was just recreated: the re-embed job fills the vectors later).
 * Runs once at start-up, before anything is served; an interrupted run continues where it stopped.
 */
export function backfillSearchIndex(store: Store, log: Logger, options: { withVectors: boolean }): void {
  if (options.withVectors) fillChunkVectors(store);
  const versions = store.libraries.searchUnindexedVersions();
  if (versions.length === 0) return;
  log.info({ versions: versions.length }, 'building the index chunks of existing library versions');
  const t0 = Date.now();
  let docs = 0;
  for (const versionId of versions) {
    const builder = new IndexChunkBuilder();
    docs += addStoredSnippets(store, versionId, builder, options.withVectors);
    flushChunk(store, versionId, builder);
    store.libraries.markSearchIndexed(versionId);
  }
  log.info({ versions: versions.length, snippets: docs, ms: Date.now() - t0 }, 'index chunks built');
}
