import { createHash } from 'node:crypto';
import fs from 'node:fs';

/**
 * Vectors a model computed before, keyed by the sha256 of the embedded text, for one model file:
 * texts seen before are not run through the model again (the test suite's corpora, documents
 * carried to another instance). A read-only file, sorted by key and searched in place, so a large
 * cache costs its file size in memory and no object per entry:
 *
 *   "STKVEC01", uint32 header length, header JSON {model: sha256 of model.onnx, dims, count},
 *   then `count` entries: 16 bytes of the text's sha256, float32 scale, `dims` int8 (vector / scale).
 *
 * Vectors are stored in 8 bits with one scale each (cosine to the model's own above 0.9999).
 */
const MAGIC = 'STKVEC01';

export interface VectorCacheHeader {
  model: string;
  dims: number;
  count: number;
}

export function textKey(text: string): Buffer {
  return createHash('sha256').update(text).digest().subarray(0, 16);
}

export class VectorCache {
  private constructor(
    readonly header: VectorCacheHeader,
    private readonly entries: Buffer,
  ) {}

  private get stride(): number {
    return 20 + this.header.dims;
  }

  /** Opens a cache file; throws when it is not one, or was made by another model file or dimension. */
  static open(file: string, model: string, dims: number): VectorCache {
    const buf = fs.readFileSync(file);
    if (buf.subarray(0, 8).toString('latin1') !== MAGIC) throw new Error(`${file} is not a Stacks vector cache`);
    const length = buf.readUInt32LE(8);
    const header = JSON.parse(buf.subarray(12, 12 + length).toString('utf8')) as VectorCacheHeader;
    if (header.model !== model || header.dims !== dims)
      throw new Error(`${file} holds vectors of model ${header.model.slice(0, 12)} (${header.dims} dims), not of ${model.slice(0, 12)} (${dims} dims)`);
    const entries = buf.subarray(12 + length);
    if (entries.length !== header.count * (20 + dims)) throw new Error(`${file} is cut short`);
    return new VectorCache(header, entries);
  }

  get size(): number {
    return this.header.count;
  }

  /** The cached vector of a text, or null. */
  get(text: string): Float32Array | null {
    return this.getByKey(textKey(text));
  }

  /** The cached vector of the text whose textKey is `key`, or null. */
  getByKey(key: Buffer): Float32Array | null {
    let lo = 0;
    let hi = this.header.count - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const at = mid * this.stride;
      const c = key.compare(this.entries, at, at + 16);
      if (c === 0) return this.vectorAt(at);
      if (c > 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return null;
  }

  private vectorAt(at: number): Float32Array {
    const v = new Float32Array(this.header.dims);
    let norm = 0;
    for (let i = 0; i < v.length; i++) {
      v[i] = this.entries.readInt8(at + 20 + i);
      norm += v[i] * v[i];
    }
    // Unit length again, as the model's own vectors (the scale only mattered for the rounding).
    const inv = 1 / (Math.sqrt(norm) || 1);
    for (let i = 0; i < v.length; i++) v[i] *= inv;
    return v;
  }

  /** The bytes of a cache file holding these texts' vectors (duplicates kept once). */
  static build(model: string, dims: number, items: { text: string; vector: Float32Array }[]): Buffer {
    const byKey = new Map<string, { key: Buffer; vector: Float32Array }>();
    for (const { text, vector } of items) {
      if (vector.length !== dims) throw new Error(`a vector has ${vector.length} dimensions, not ${dims}`);
      const key = textKey(text);
      byKey.set(key.toString('hex'), { key, vector });
    }
    const sorted = [...byKey.values()].sort((a, b) => a.key.compare(b.key));
    const header = Buffer.from(JSON.stringify({ model, dims, count: sorted.length } satisfies VectorCacheHeader), 'utf8');
    const out = Buffer.alloc(12 + header.length + sorted.length * (20 + dims));
    out.write(MAGIC, 0, 'latin1');
    out.writeUInt32LE(header.length, 8);
    header.copy(out, 12);
    let at = 12 + header.length;
    for (const { key, vector } of sorted) {
      key.copy(out, at);
      let max = 0;
      for (const x of vector) max = Math.max(max, Math.abs(x));
      const scale = max / 127 || 1;
      out.writeFloatLE(scale, at + 16);
      for (let i = 0; i < dims; i++) out.writeInt8(Math.round(vector[i]! / scale), at + 20 + i);
      at += 20 + dims;
    }
    return out;
  }
}
