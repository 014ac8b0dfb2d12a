import type { Store } from '../store/index.ts';
import { DEFAULT_MODEL, FEATURES, MODEL_FORMAT, type LearnedModel, type RankingModel } from './ranker.ts';

/** Parsed models per store (each worker thread has its own), keyed by version and build time. */
const cache = new WeakMap<Store, Map<number, { builtAt: string; model: RankingModel }>>();
const MAX_CACHED = 2000;
/** Parsed models held, and lookups served from the cache or parsed, in this thread since start (for /metrics). */
const stats = { entries: 0, hits: 0, misses: 0 };

export function modelCacheStats(): { entries: number; hits: number; misses: number } {
  return { ...stats };
}

/**
 * The ranking model a version is served with: the one its `search-model` job learned, or the
 * default while none is stored (a version just swapped in) or when it has another format.
 */
export function modelFor(store: Store, versionId: number): RankingModel {
  const row = store.models.get(versionId);
  if (!row || row.format !== MODEL_FORMAT) return DEFAULT_MODEL;
  let byVersion = cache.get(store);
  if (!byVersion) cache.set(store, (byVersion = new Map()));
  const hit = byVersion.get(versionId);
  if (hit && hit.builtAt === row.builtAt) {
    stats.hits++;
    return hit.model;
  }
  stats.misses++;
  const parsed = JSON.parse(row.model) as LearnedModel;
  const model: RankingModel = parsed.weights.length === FEATURES.length ? { weights: parsed.weights, calibration: parsed.calibration, changePages: new Set(parsed.changePages) } : DEFAULT_MODEL;
  const before = byVersion.size;
  if (byVersion.size >= MAX_CACHED) byVersion.delete(byVersion.keys().next().value!);
  byVersion.set(versionId, { builtAt: row.builtAt, model });
  stats.entries += byVersion.size - before;
  return model;
}

/** Package lists per store and version, by the time their model was stored (the catalogue asks for every library each time it is rebuilt). */
const packageCache = new WeakMap<Store, Map<number, { builtAt: string; packages: string[] }>>();

/** The packages a version's learned model found installed (none before its model is learned, or in a model of another format). */
export function packagesFor(store: Store, versionId: number): string[] {
  const builtAt = store.models.builtAt(versionId);
  if (builtAt === null) return [];
  let byVersion = packageCache.get(store);
  if (!byVersion) packageCache.set(store, (byVersion = new Map()));
  const hit = byVersion.get(versionId);
  if (hit && hit.builtAt === builtAt) return hit.packages;
  const row = store.models.get(versionId);
  const parsed = row && row.format === MODEL_FORMAT ? (JSON.parse(row.model) as Partial<LearnedModel>) : null;
  const packages = Array.isArray(parsed?.packages) ? parsed.packages : [];
  if (byVersion.size >= MAX_CACHED) byVersion.delete(byVersion.keys().next().value!);
  byVersion.set(versionId, { builtAt: row?.builtAt ?? builtAt, packages });
  return packages;
}
