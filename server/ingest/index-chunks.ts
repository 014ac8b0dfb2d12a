import { BM25_WEIGHTS } from '../search/bm25.ts';
import { indexTokens, type IndexColumns } from '../search/text.ts';
import { quantizeInto } from '../embed/quantize.ts';

/** One chunk of a version's index: documents with ids in [baseId, baseId + 65535], their lengths, postings and quantized embeddings. */
export interface IndexChunk {
  baseId: number;
  lastId: number;
  docs: number;
  /** Sum of the documents' lengths (tokens). */
  tokens: number;
  /** Length of each document by id offset (0 where no document has that id). */
  lengths: Uint16Array;
  /** Per term: how many documents hold it, and (id offset, weighted frequency x 10) pairs in id order. */
  postings: Map<string, { df: number; data: Uint16Array }>;
  /** 8-bit embeddings by id offset (dims values each; zeros where a document has none), or null without an embedder. */
  vectors: { dims: number; data: Int8Array; norms: Float32Array } | null;
}

/** Column weights x 10 (integers: 1.2 and 1.5 stay exact in the 16-bit frequencies). */
const WEIGHTS: [keyof IndexColumns, number][] = (['title', 'breadcrumb', 'description', 'code', 'content'] as const).map((c) => [c, Math.round(BM25_WEIGHTS[c] * 10)]);
const MAX_U16 = 0xffff;

/**
 * Builds index chunks from documents added in increasing id order. The weighted frequency
 * of a term in a document is the sum of the weights of the columns it occurs in, once per
 * occurrence, and a document's length counts every token plus one (the FTS5 scope column): the
 * quantities of FTS5's bm25() with the same column weights.
 */
export class IndexChunkBuilder {
  private baseId = -1;
  private lastId = -1;
  private docs = 0;
  private tokens = 0;
  private lengths: number[] = [];
  private postings = new Map<string, number[]>();
  private vectors: { offset: number; vector: Float32Array }[] = [];

  constructor(private readonly maxDocs = 8192) {}

  get size(): number {
    return this.docs;
  }

  /** Whether a document with this id can join the open chunk (otherwise take() it first). */
  fits(id: number): boolean {
    return this.docs === 0 || (id > this.lastId && id - this.baseId <= MAX_U16 && this.docs < this.maxDocs);
  }

  add(id: number, columns: IndexColumns, vector: Float32Array | null = null): void {
    if (!this.fits(id)) throw new Error(`document ${id} does not fit the open chunk`);
    if (this.docs === 0) this.baseId = id;
    const offset = id - this.baseId;
    const freq = new Map<string, number>();
    let length = 1;
    for (const [column, weight] of WEIGHTS) {
      for (const token of indexTokens(columns[column])) {
        freq.set(token, (freq.get(token) ?? 0) + weight);
        length++;
      }
    }
    for (const [token, f] of freq) {
      let list = this.postings.get(token);
      if (!list) this.postings.set(token, (list = []));
      list.push(offset, Math.min(f, MAX_U16));
    }
    this.lengths[offset] = Math.min(length, MAX_U16);
    if (vector) this.vectors.push({ offset, vector });
    this.lastId = id;
    this.docs++;
    this.tokens += length;
  }

  /** The chunk built so far (null when empty); the builder starts a new one. */
  take(): IndexChunk | null {
    if (this.docs === 0) return null;
    const lengths = new Uint16Array(this.lastId - this.baseId + 1);
    this.lengths.forEach((l, i) => (lengths[i] = l ?? 0));
    const postings = new Map<string, { df: number; data: Uint16Array }>();
    for (const [term, list] of this.postings) postings.set(term, { df: list.length / 2, data: Uint16Array.from(list) });
    const chunk: IndexChunk = {
      baseId: this.baseId, lastId: this.lastId, docs: this.docs, tokens: this.tokens, lengths, postings,
      vectors: quantizeChunk(this.vectors, lengths.length),
    };
    this.baseId = this.lastId = -1;
    this.docs = this.tokens = 0;
    this.lengths = [];
    this.postings = new Map();
    this.vectors = [];
    return chunk;
  }
}

/** Dense 8-bit vectors of a chunk of `span` id offsets; null when no document has a vector (or their dimensions differ). */
export function quantizeChunk(vectors: { offset: number; vector: Float32Array }[], span: number): IndexChunk['vectors'] {
  if (vectors.length === 0) return null;
  const dims = vectors[0]!.vector.length;
  if (vectors.some((v) => v.vector.length !== dims)) return null;
  const data = new Int8Array(span * dims);
  const norms = new Float32Array(span);
  for (const { offset, vector } of vectors) norms[offset] = quantizeInto(vector, data, offset * dims);
  return { dims, data, norms };
}
