import type { Store } from '../store/index.ts';
import { sqliteVersionReads, type VersionReads } from '../store/version-reads.ts';
import { runSync, wait, type Step } from './read-steps.ts';
import { DEFAULT_MODEL, FEATURES, MODEL_FORMAT, type LearnedModel, type RankingModel } from './ranker.ts';

/** A stored model as parsed: what ranking reads and the packages the catalogue reads. */
interface ParsedModel {
  builtAt: string;
  model: RankingModel;
  packages: string[];
}

/** Parsed models per store (each worker thread has its own; VersionReads.owner), keyed by version and build time. */
const cache = new WeakMap<object, Map<number, ParsedModel>>();
const MAX_CACHED = 2000;
/** Parsed models held, and lookups served from the cache or parsed, in this thread since start (for /metrics). */
const stats = { entries: 0, hits: 0, misses: 0 };

export function modelCacheStats(): { entries: number; hits: number; misses: number } {
  return { ...stats };
}

/**
 * A version's stored model, parsed once per time it was stored (only that time is read to tell);
 * null while none is stored (a version just swapped in). A model of another format (stored before
 * an upgrade, until the job learns it again) is remembered as the default with no packages, so that
 * each search in the meantime does not read the whole row again.
 */
function* storedModel(reads: VersionReads, versionId: number): Step<ParsedModel | null> {
  const builtAt = yield* wait(reads.modelBuiltAt(versionId));
  if (builtAt === null) return null;
  let byVersion = cache.get(reads.owner);
  if (!byVersion) cache.set(reads.owner, (byVersion = new Map()));
  const hit = byVersion.get(versionId);
  if (hit && hit.builtAt === builtAt) {
    stats.hits++;
    return hit;
  }
  const row = yield* wait(reads.model(versionId));
  if (!row) return null;
  stats.misses++;
  const entry = row.format === MODEL_FORMAT ? parse(row.builtAt, row.model) : { builtAt: row.builtAt, model: DEFAULT_MODEL, packages: [] };
  const before = byVersion.size;
  if (byVersion.size >= MAX_CACHED) byVersion.delete(byVersion.keys().next().value!);
  byVersion.set(versionId, entry);
  stats.entries += byVersion.size - before;
  return entry;
}

/** A stored model of the current format, parsed. */
function parse(builtAt: string, json: string): ParsedModel {
  const parsed = JSON.parse(json) as LearnedModel;
  const quoted = parsed.quoted?.weights.length === FEATURES.length ? { quoted: parsed.quoted } : {};
  const model: RankingModel =
    parsed.weights.length === FEATURES.length
      ? { weights: parsed.weights, calibration: parsed.calibration, ...quoted, changePages: new Set(parsed.changePages) }
      : DEFAULT_MODEL;
  return { builtAt, model, packages: Array.isArray(parsed.packages) ? parsed.packages : [] };
}

/**
 * The ranking model a version is served with: the one its `search-model` job learned, or the
 * default while none is stored (a version just swapped in) or when it has another format.
 */
export function modelFor(store: Store, versionId: number): RankingModel {
  return runSync(modelStep(sqliteVersionReads(store), versionId));
}

/** modelFor over either backend's reads (server/store/version-reads.ts). */
export function* modelStep(reads: VersionReads, versionId: number): Step<RankingModel> {
  return (yield* storedModel(reads, versionId))?.model ?? DEFAULT_MODEL;
}

/** The packages a version's learned model found installed (none before its model is learned, or in a model of another format). */
export function packagesFor(store: Store, versionId: number): string[] {
  return runSync(packagesStep(sqliteVersionReads(store), versionId));
}

/** packagesFor over either backend's reads. */
export function* packagesStep(reads: VersionReads, versionId: number): Step<string[]> {
  return (yield* storedModel(reads, versionId))?.packages ?? [];
}
