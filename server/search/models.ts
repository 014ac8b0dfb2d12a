import type { Store } from '../store/index.ts';
import { DEFAULT_MODEL, FEATURES, MODEL_FORMAT, type LearnedModel, type RankingModel } from './ranker.ts';

/** A stored model as parsed: what ranking reads and the packages the catalogue reads. */
interface ParsedModel {
  builtAt: string;
  model: RankingModel;
  packages: string[];
}

/** Parsed models per store (each worker thread has its own), keyed by version and build time. */
const cache = new WeakMap<Store, Map<number, ParsedModel>>();
const MAX_CACHED = 2000;
/** Parsed models held, and lookups served from the cache or parsed, in this thread since start (for /metrics). */
const stats = { entries: 0, hits: 0, misses: 0 };

export function modelCacheStats(): { entries: number; hits: number; misses: number } {
  return { ...stats };
}

/**
 * A version's stored model, parsed once per time it was stored (only that time is read to tell);
 * null while none is stored (a version just swapped in) or when it has another format.
 */
function storedModel(store: Store, versionId: number): ParsedModel | null {
  const builtAt = store.models.builtAt(versionId);
  if (builtAt === null) return null;
  let byVersion = cache.get(store);
  if (!byVersion) cache.set(store, (byVersion = new Map()));
  const hit = byVersion.get(versionId);
  if (hit && hit.builtAt === builtAt) {
    stats.hits++;
    return hit;
  }
  const row = store.models.get(versionId);
  if (!row || row.format !== MODEL_FORMAT) return null;
  stats.misses++;
  const parsed = JSON.parse(row.model) as LearnedModel;
  const model: RankingModel = parsed.weights.length === FEATURES.length ? { weights: parsed.weights, calibration: parsed.calibration, changePages: new Set(parsed.changePages) } : DEFAULT_MODEL;
  const entry: ParsedModel = { builtAt: row.builtAt, model, packages: Array.isArray(parsed.packages) ? parsed.packages : [] };
  const before = byVersion.size;
  if (byVersion.size >= MAX_CACHED) byVersion.delete(byVersion.keys().next().value!);
  byVersion.set(versionId, entry);
  stats.entries += byVersion.size - before;
  return entry;
}

/**
 * The ranking model a version is served with: the one its `search-model` job learned, or the
 * default while none is stored (a version just swapped in) or when it has another format.
 */
export function modelFor(store: Store, versionId: number): RankingModel {
  return storedModel(store, versionId)?.model ?? DEFAULT_MODEL;
}

/** The packages a version's learned model found installed (none before its model is learned, or in a model of another format). */
export function packagesFor(store: Store, versionId: number): string[] {
  return storedModel(store, versionId)?.packages ?? [];
}
