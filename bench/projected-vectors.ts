// A BENCHMARK DEVICE, not an embedder of the product: vectors of the sentence model's shape and
// identity for the 1M bench corpus (bench/corpus.ts, `--vectors model`), derived from the builtin
// word vectors of the same text because embedding a million snippets with the model would take
// about 7 hours on this machine.
//
// Each text's builtin 100-d vector is multiplied by one fixed, seeded Gaussian matrix (384 x 100)
// and normalised. The result has the model's dimension and is labelled with the installed model's
// embedder id, so a server running the real model (which embeds every question with it) serves the
// corpus as "vectors ready": its KNN scans 384-byte 8-bit vectors and reads 1,536-byte float copies,
// as it would with the model's own vectors. What these vectors cost to serve (time, memory) is what
// real vectors of that dimension cost; their similarities to the model's question vectors mean
// NOTHING. Figures measured on them are speed and memory, never quality.
import type { Embedder } from '../server/embed/types.ts';
import type { Store } from '../server/store/index.ts';
import { createEmbedder, describeEmbedder } from '../server/embed/index.ts';
import { fillVectors } from '../server/embed/reembed-job.ts';
import { loadConfig } from '../server/config.ts';
import { createLogger } from '../server/log.ts';
import { rng } from './rng.ts';

/** Changes whenever the projection changes (another seed or method): a corpus built by another one is rebuilt. */
export const PROJECTION_VERSION = 1;
const SEED = 384_100;

/** What the bench corpus marker records about vectors made by projectionOf. */
export interface ProjectionLabel {
  kind: 'projected';
  /** The embedder whose vectors were projected (the builtin word vectors). */
  from: string;
  version: number;
  /** Said in the marker itself, so nobody mistakes the corpus for one embedded by the model. */
  note: string;
}

/**
 * `source`'s vectors projected to `dims` dimensions by a fixed seeded Gaussian matrix and
 * normalised, under the id `id` (the installed model's). Deterministic: the same text gives the
 * same vector on every machine.
 */
export class ProjectedEmbedder implements Embedder {
  /** Written as they are stored (the embed job's path, bench/corpus.ts), never left to a job. */
  readonly deferred = false;
  readonly sentenceEncoder = false;
  private readonly matrix: Float32Array;

  constructor(
    private readonly source: Embedder,
    readonly id: string,
    readonly dims: number,
  ) {
    this.matrix = gaussianMatrix(dims, source.dims, SEED);
  }

  get label(): ProjectionLabel {
    return {
      kind: 'projected',
      from: this.source.id,
      version: PROJECTION_VERSION,
      note: `benchmark device: the ${this.source.dims}-d vectors of ${this.source.id} projected to ${this.dims} dimensions and labelled ${this.id}; speed and memory only, their similarities to the model's question vectors mean nothing`,
    };
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    return (await this.source.embed(texts)).map((v) => this.project(v));
  }

  project(v: Float32Array): Float32Array {
    const n = this.source.dims;
    if (v.length !== n) throw new Error(`expected a ${n}-d vector, got ${v.length}`);
    const out = new Float32Array(this.dims);
    let norm = 0;
    for (let r = 0; r < this.dims; r++) {
      let s = 0;
      const row = r * n;
      for (let c = 0; c < n; c++) s += this.matrix[row + c]! * v[c]!;
      out[r] = s;
      norm += s * s;
    }
    const k = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (let r = 0; r < this.dims; r++) out[r]! *= k;
    return out;
  }
}

/** rows x cols standard normal entries (Box-Muller over the corpus's seeded PRNG). */
function gaussianMatrix(rows: number, cols: number, seed: number): Float32Array {
  const rand = rng(seed);
  const m = new Float32Array(rows * cols);
  for (let i = 0; i < m.length; i += 2) {
    const u = 1 - rand();
    const t = 2 * Math.PI * rand();
    const r = Math.sqrt(-2 * Math.log(u));
    m[i] = r * Math.cos(t);
    if (i + 1 < m.length) m[i + 1] = r * Math.sin(t);
  }
  return m;
}

/**
 * The installed sentence model, as the server loads it (createEmbedder with STACKS_EMBED_PROVIDER=model:
 * the pinned files checked by hash; its workers start at its first use). Throws when the server
 * would fall back to the word vectors: a server started on the `--vectors model` corpus without the
 * model would recreate its vector table for the word vectors.
 */
export async function installedModel(dataDir: string): Promise<Embedder> {
  const config = loadConfig({ dataDir, logLevel: 'warn', embedProvider: 'model' } as never, {});
  const embedder = await createEmbedder(config, createLogger('warn'), { onDemand: true });
  const status = describeEmbedder(embedder);
  if (!status.model) {
    await embedder.close?.();
    throw new Error(`bench corpus --vectors model needs the sentence model: ${status.fallback ?? `the embedder is ${status.id}`}`);
  }
  return embedder;
}

/**
 * Recreates the vector table of `store` for the projected vectors' id and dimension (as a server
 * does when its embedder changes: float copies cleared, every version waiting) and fills it with
 * the embed job's own code (fillVectors: 8-bit vectors in the vector table, float copies in the
 * snippet rows, each version marked complete once all its snippets have one).
 */
export async function writeProjectedVectors(store: Store, projected: ProjectedEmbedder, log: (m: string) => void): Promise<void> {
  await store.vectors.ensure(projected.id, projected.dims);
  let next = 0;
  const { done } = await fillVectors(store, projected, {
    progress: (p) => {
      if (p.done < next) return;
      log(`projected vectors ${p.done}/${p.total}`);
      next = p.done + 100_000;
    },
  });
  const counts = await store.vectors.versionCounts();
  if (counts.pending > 0) throw new Error(`bench corpus: ${counts.pending} versions still wait for their vectors`);
  log(`${done} projected ${projected.dims}-d vectors written`);
}
