import { termWeight } from '../search/bm25.ts';
import { TUNING } from '../search/tuning.ts';
import { indexTokens, type IndexColumns } from '../search/text.ts';
import type { TermChunk } from '../store/terms.ts';

/** Column weights x 10 (integers: 1.2 and 1.5 stay exact in the 16-bit frequencies). */
const WEIGHTS: [keyof IndexColumns, number][] = (['title', 'breadcrumb', 'description', 'code', 'content'] as const).map((c) => [
  c,
  Math.round(TUNING.bm25.weights[c] * 10),
]);
const MAX_U16 = 0xffff;

/**
 * Builds term-index chunks from documents added in increasing id order. The weighted frequency
 * of a term in a document is the sum of the weights of the columns it occurs in, once per
 * occurrence, and a document's length counts every token plus one (the FTS5 scope column): the
 * quantities of FTS5's bm25() with the same column weights.
 */
export class TermChunkBuilder {
  private baseId = -1;
  private lastId = -1;
  private docs = 0;
  private tokens = 0;
  private lengths: number[] = [];
  private norms: number[] = [];
  private postings = new Map<string, number[]>();

  constructor(private readonly maxDocs = 8192) {}

  get size(): number {
    return this.docs;
  }

  /** Whether a document with this id can join the open chunk (otherwise take() it first). */
  fits(id: number): boolean {
    return this.docs === 0 || (id > this.lastId && id - this.baseId <= MAX_U16 && this.docs < this.maxDocs);
  }

  add(id: number, columns: IndexColumns): void {
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
    let norm = 0;
    for (const [token, f] of freq) {
      let list = this.postings.get(token);
      if (!list) this.postings.set(token, (list = []));
      const stored = Math.min(f, MAX_U16);
      list.push(offset, stored);
      norm += termWeight(stored) ** 2;
    }
    this.lengths[offset] = Math.min(length, MAX_U16);
    this.norms[offset] = Math.sqrt(norm);
    this.lastId = id;
    this.docs++;
    this.tokens += length;
  }

  /** The chunk built so far (null when empty); the builder starts a new one. */
  take(): TermChunk | null {
    if (this.docs === 0) return null;
    const lengths = new Uint16Array(this.lastId - this.baseId + 1);
    this.lengths.forEach((l, i) => (lengths[i] = l ?? 0));
    const norms = new Float32Array(lengths.length);
    this.norms.forEach((n, i) => (norms[i] = n ?? 0));
    const postings = new Map<string, { df: number; data: Uint16Array }>();
    for (const [term, list] of this.postings) postings.set(term, { df: list.length / 2, data: Uint16Array.from(list) });
    const chunk: TermChunk = { baseId: this.baseId, lastId: this.lastId, docs: this.docs, tokens: this.tokens, lengths, norms, postings };
    this.baseId = this.lastId = -1;
    this.docs = this.tokens = 0;
    this.lengths = [];
    this.norms = [];
    this.postings = new Map();
    return chunk;
  }
}
