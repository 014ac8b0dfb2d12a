import { chunkBytes, type SharedVectorChunks, type VectorChunk } from '../store/vector-chunks.ts';

/**
 * One version's vector chunks packed into a SharedArrayBuffer, so that every retrieval worker scans
 * the same bytes: postMessage hands a SharedArrayBuffer over by reference, and its memory is freed
 * once no thread holds it any more.
 */
export interface PackedChunks {
  key: string;
  buffer: SharedArrayBuffer;
  /** Per chunk: its size (slots), then the byte lengths of its validity, rowids and vectors, in buffer order. */
  layout: number[];
}

/** What a worker tells the pool with each reply: the shared keys it scanned, and the versions it loaded and packed. */
export interface SharedVectorReport {
  touched: string[];
  shared: PackedChunks[];
}

/** The pool's word to a worker: scan these chunks too (or instead of its own copy of them), or let those go. */
export interface VectorControl {
  kind: 'vectors';
  adopt?: PackedChunks;
  drop?: string[];
}

export function pack(key: string, chunks: VectorChunk[]): PackedChunks {
  const buffer = new SharedArrayBuffer(chunkBytes(chunks));
  const bytes = new Uint8Array(buffer);
  const layout: number[] = [];
  let at = 0;
  for (const c of chunks) {
    layout.push(c.size, c.validity.length, c.rowids.length, c.vectors.length);
    for (const part of [c.validity, c.rowids, c.vectors]) {
      bytes.set(part, at);
      at += part.length;
    }
  }
  return { key, buffer, layout };
}

export function unpack(p: PackedChunks): VectorChunk[] {
  const chunks: VectorChunk[] = [];
  let at = 0;
  const view = (length: number): Buffer => {
    const b = Buffer.from(p.buffer, at, length);
    at += length;
    return b;
  };
  for (let i = 0; i < p.layout.length; i += 4) {
    const validity = view(p.layout[i + 1]!);
    const rowids = view(p.layout[i + 2]!);
    chunks.push({ size: p.layout[i]!, validity, rowids, vectors: view(p.layout[i + 3]!) });
  }
  return chunks;
}

/**
 * A worker's side of the shared vector cache: what the pool let it keep, plus what it loaded since
 * its last reply (reported with that reply). The pool decides what stays (SharedVectorBudget).
 */
export class WorkerSharedVectors implements SharedVectorChunks {
  private readonly entries = new Map<string, VectorChunk[]>();
  private touched = new Set<string>();
  private fresh: PackedChunks[] = [];
  /** Versions this worker read out of SQLite for the shared cache (what the tests check). */
  loads = 0;

  get(key: string): VectorChunk[] | undefined {
    const hit = this.entries.get(key);
    if (hit) this.touched.add(key);
    return hit;
  }

  put(key: string, chunks: VectorChunk[]): VectorChunk[] {
    this.loads++;
    const packed = pack(key, chunks);
    const views = unpack(packed);
    this.entries.set(key, views);
    this.fresh.push(packed);
    return views;
  }

  apply(control: VectorControl): void {
    if (control.adopt) this.entries.set(control.adopt.key, unpack(control.adopt));
    for (const key of control.drop ?? []) this.entries.delete(key);
  }

  /** What to tell the pool with the next reply; undefined when nothing happened. */
  report(): SharedVectorReport | undefined {
    if (this.touched.size === 0 && this.fresh.length === 0) return undefined;
    const r = { touched: [...this.touched], shared: this.fresh };
    this.touched = new Set();
    this.fresh = [];
    return r;
  }

  /** Bytes of the chunks this worker can scan without reading SQLite. */
  get heldBytes(): number {
    let n = 0;
    for (const chunks of this.entries.values()) n += chunkBytes(chunks);
    return n;
  }
}

/**
 * The pool's side: one budget for the shared chunks of all workers, least recently scanned out
 * first. A worker's newly loaded version is offered to the others; when two load the same version at
 * once, the first copy reported is kept and the other worker told to scan it instead of its own.
 */
export class SharedVectorBudget<W> {
  private readonly entries = new Map<string, PackedChunks>();
  private bytes = 0;

  constructor(private readonly budgetBytes: number) {}

  /** Takes a worker's report; returns what to send to which worker. */
  report(from: W, all: readonly W[], r: SharedVectorReport): { to: W; control: VectorControl }[] {
    const out: { to: W; control: VectorControl }[] = [];
    for (const key of r.touched) {
      const e = this.entries.get(key);
      if (!e) continue;
      // Map order is recency order.
      this.entries.delete(key);
      this.entries.set(key, e);
    }
    for (const p of r.shared) {
      const kept = this.entries.get(p.key);
      if (kept) {
        out.push({ to: from, control: { kind: 'vectors', adopt: kept } });
        continue;
      }
      if (p.buffer.byteLength > this.budgetBytes) {
        out.push({ to: from, control: { kind: 'vectors', drop: [p.key] } });
        continue;
      }
      const evicted: string[] = [];
      for (const [key, old] of this.entries) {
        if (this.bytes + p.buffer.byteLength <= this.budgetBytes) break;
        this.entries.delete(key);
        this.bytes -= old.buffer.byteLength;
        evicted.push(key);
      }
      this.entries.set(p.key, p);
      this.bytes += p.buffer.byteLength;
      for (const w of all) {
        if (evicted.length > 0) out.push({ to: w, control: { kind: 'vectors', drop: evicted } });
        if (w !== from) out.push({ to: w, control: { kind: 'vectors', adopt: p } });
      }
    }
    return out;
  }

  /** Bytes of the shared chunks kept. */
  get heldBytes(): number {
    return this.bytes;
  }
}
