import type { MessagePort } from 'node:worker_threads';
import { scratchBytes } from '../../lib/vector/int8-l2.ts';
import { chunkBytes, type SharedVectorChunks, type VectorChunk } from '../store/vector-chunks.ts';

/**
 * One version's vector chunks packed into a shared WebAssembly memory, so that every retrieval
 * worker scans the same bytes, in place: postMessage hands a shared memory over by reference, and
 * it is freed once no thread holds it any more. The memory starts with one working area for the
 * SIMD kernel per worker (lib/vector/int8-l2.ts InPlace), then holds each chunk's validity, rowids
 * and vectors, then 16 bytes of slack. Scanning the vectors where they lie saved copying each
 * version's (about 2 MB at 384 dimensions) into the kernel's memory on every search, which cost
 * as much as the scan.
 */
export interface PackedChunks {
  key: string;
  memory: WebAssembly.Memory;
  /** Per chunk: its size (slots), then the byte lengths of its validity, rowids and vectors, in memory order. */
  layout: number[];
  /** Bytes of one worker's working area; worker i's starts at i x scratch, the chunks at workers x scratch. */
  scratch: number;
  workers: number;
}

/**
 * What a worker tells the pool with each reply: the shared keys it scanned, and the versions it
 * loaded and packed (only their keys and sizes: the chunks themselves go from worker to worker).
 */
export interface SharedVectorReport {
  touched: string[];
  loaded: { key: string; bytes: number }[];
}

/** The pool's word to a worker: send the chunks of a key to these workers, or let those keys go. */
export interface VectorControl {
  kind: 'vectors';
  send?: { key: string; to: number[] };
  drop?: string[];
}

const PAGE = 65536;

/** `workers`: how many threads may scan it at once (each gets a working area, by its number in the pool). */
export function pack(key: string, chunks: VectorChunk[], workers: number): PackedChunks {
  // Chunks are laid out as sqlite-vec stores them (SearchStore.scan checks): size x dims bytes of vectors.
  const sized = chunks.find((c) => c.size > 0);
  const dims = sized ? sized.vectors.length / sized.size : 0;
  const scratch = dims > 0 ? scratchBytes(dims, Math.max(...chunks.map((c) => c.size))) : 0;
  const start = scratch * workers;
  const pages = Math.max(1, Math.ceil((start + chunkBytes(chunks) + 16) / PAGE));
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
  const bytes = new Uint8Array(memory.buffer);
  const layout: number[] = [];
  let at = start;
  for (const c of chunks) {
    layout.push(c.size, c.validity.length, c.rowids.length, c.vectors.length);
    for (const part of [c.validity, c.rowids, c.vectors]) {
      bytes.set(part, at);
      at += part.length;
    }
  }
  return { key, memory, layout, scratch, workers };
}

/** The chunks of a packed version as worker `worker` scans them: views of the shared memory, scanned in place in its own working area. */
export function unpack(p: PackedChunks, worker: number): VectorChunk[] {
  const chunks: VectorChunk[] = [];
  const buffer = p.memory.buffer;
  // A thread without a working area of its own (none is made for more workers than the pool has) copies the vectors to scan them.
  const inPlace = p.scratch > 0 && worker >= 0 && worker < p.workers ? { memory: p.memory, scratch: worker * p.scratch } : undefined;
  let at = p.scratch * p.workers;
  const view = (length: number): Buffer => {
    const b = Buffer.from(buffer, at, length);
    at += length;
    return b;
  };
  for (let i = 0; i < p.layout.length; i += 4) {
    const validity = view(p.layout[i + 1]!);
    const rowids = view(p.layout[i + 2]!);
    chunks.push({ size: p.layout[i]!, validity, rowids, vectors: view(p.layout[i + 3]!), ...(inPlace ? { inPlace } : {}) });
  }
  return chunks;
}

/** How long an entry must have gone unscanned before a newly read version may take its place in a full cache. */
export const COLD_MS = 30_000;

/**
 * A worker's side of the shared vector cache: what the pool let it keep, plus what it loaded since
 * its last reply (reported with that reply). The pool decides what stays (SharedVectorBudget). The
 * chunks travel between workers over their own MessagePorts, never through the request thread:
 * a thread that only receives SharedArrayBuffers never collects them (see remove), and the request
 * thread held every one the workers had ever shared (2.9 GB RSS at 1M).
 */
export class WorkerSharedVectors implements SharedVectorChunks {
  private readonly entries = new Map<string, { packed: PackedChunks; chunks: VectorChunk[]; scannedAt: number }>();
  private touched = new Set<string>();
  private loaded: { key: string; bytes: number }[] = [];
  private bytes = 0;
  private letGo = 0;
  /** Versions this worker read out of SQLite for the shared cache (what the tests check). */
  loads = 0;
  /** This worker's number in the pool (the one its peers lack), which names its working area in each packed memory. */
  private readonly self: number;
  /** Workers in the pool: each packed memory has a working area for each. */
  private readonly workers: number;

  /**
   * `peers`: a port to each other worker, by its number in the pool. `budgetBytes`: the pool's
   * budget, enforced here too, since chunks sent over a port can arrive after the pool's word to
   * drop them (another channel): such a straggler is still right (its key names immutable vectors),
   * and this bound keeps it from staying beyond the budget.
   */
  constructor(
    private readonly peers: ReadonlyMap<number, MessagePort>,
    private readonly budgetBytes: number,
    private readonly collect: () => void = () => {},
  ) {
    this.workers = peers.size + 1;
    let self = 0;
    while (peers.has(self)) self++;
    this.self = self;
    for (const port of peers.values()) port.on('message', (p: PackedChunks) => this.keep(p, unpack(p, this.self)));
  }

  get(key: string): VectorChunk[] | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    this.touched.add(key);
    hit.scannedAt = Date.now();
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit.chunks;
  }

  put(key: string, chunks: VectorChunk[]): VectorChunk[] {
    this.loads++;
    if (!this.admits(chunkBytes(chunks))) return chunks;
    const packed = pack(key, chunks, this.workers);
    const views = unpack(packed, this.self);
    this.keep(packed, views);
    this.loaded.push({ key, bytes: packed.memory.buffer.byteLength });
    return views;
  }

  apply(control: VectorControl): void {
    const send = control.send && this.entries.get(control.send.key);
    if (send && control.send) for (const to of control.send.to) this.peers.get(to)?.postMessage(send.packed);
    for (const key of control.drop ?? []) this.remove(key);
  }

  /**
   * Whether a version just read joins the shared cache: when it fits, or when the least recently
   * scanned entry has not been scanned for COLD_MS (a retired version, a library nobody asks any
   * more). Not when everything held is in use: turning the cache over costs a new SharedArrayBuffer
   * and a full collection per budget/4 let go (with 256 MB for 384 MB of vectors, `search` fell from
   * 131 to 117 req/s and RSS rose to 1.46 GB), and for requests spread evenly over more versions
   * than fit it keeps no more of them in memory than a fixed set does. The rest is scanned from the
   * Buffers SQLite returned, left to the young generation, as without a cache.
   */
  private admits(bytes: number): boolean {
    if (this.bytes + bytes <= this.budgetBytes) return true;
    const oldest = this.entries.values().next().value;
    return oldest !== undefined && Date.now() - oldest.scannedAt >= COLD_MS;
  }

  private keep(packed: PackedChunks, chunks: VectorChunk[]): void {
    this.remove(packed.key);
    for (const [old] of this.entries) {
      if (this.bytes + packed.memory.buffer.byteLength <= this.budgetBytes) break;
      this.remove(old);
    }
    this.entries.set(packed.key, { packed, chunks, scannedAt: Date.now() });
    this.bytes += packed.memory.buffer.byteLength;
  }

  private remove(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.bytes -= e.packed.memory.buffer.byteLength;
    // A dropped SharedArrayBuffer's memory is freed only once every thread's handle to it is
    // collected, and V8 does not count a received one as this thread's memory: nothing prompts a
    // collection, and while the budget turned over (256 MB for 384 MB of vectors) RSS reached 2.7 GB.
    this.letGo += e.packed.memory.buffer.byteLength;
    if (this.letGo >= this.budgetBytes / 4) {
      this.letGo = 0;
      this.collect();
    }
  }

  /** What to tell the pool with the next reply; undefined when nothing happened. */
  report(): SharedVectorReport | undefined {
    if (this.touched.size === 0 && this.loaded.length === 0) return undefined;
    const r = { touched: [...this.touched], loaded: this.loaded };
    this.touched = new Set();
    this.loaded = [];
    return r;
  }

  /** Bytes of the chunks this worker can scan without reading SQLite. */
  get heldBytes(): number {
    return this.bytes;
  }
}

/**
 * The pool's side: one budget for the shared chunks of all workers (by their numbers), least
 * recently scanned out first. A worker's newly loaded version is sent to the others; when two load
 * the same version at once, the first one reported is kept and its holder sends it to the other,
 * whose own copy it replaces.
 */
export class SharedVectorBudget {
  /** Key -> the worker that loaded it and its bytes, in recency order. */
  private readonly entries = new Map<string, { holder: number; bytes: number }>();
  private bytes = 0;

  constructor(private readonly budgetBytes: number) {}

  /** Takes worker `from`'s report (`all`: the live workers); returns what to tell which worker. */
  report(from: number, all: readonly number[], r: SharedVectorReport): { to: number; control: VectorControl }[] {
    const out: { to: number; control: VectorControl }[] = [];
    for (const key of r.touched) {
      const e = this.entries.get(key);
      if (!e) continue;
      // Map order is recency order.
      this.entries.delete(key);
      this.entries.set(key, e);
    }
    for (const { key, bytes } of r.loaded) {
      const kept = this.entries.get(key);
      if (kept && kept.holder !== from && all.includes(kept.holder)) {
        out.push({ to: kept.holder, control: { kind: 'vectors', send: { key, to: [from] } } });
        continue;
      }
      if (kept) this.remove(key);
      if (bytes > this.budgetBytes) {
        out.push({ to: from, control: { kind: 'vectors', drop: [key] } });
        continue;
      }
      const evicted: string[] = [];
      for (const [old] of this.entries) {
        if (this.bytes + bytes <= this.budgetBytes) break;
        this.remove(old);
        evicted.push(old);
      }
      this.entries.set(key, { holder: from, bytes });
      this.bytes += bytes;
      if (evicted.length > 0) for (const w of all) out.push({ to: w, control: { kind: 'vectors', drop: evicted } });
      const others = all.filter((w) => w !== from);
      if (others.length > 0) out.push({ to: from, control: { kind: 'vectors', send: { key, to: others } } });
    }
    return out;
  }

  private remove(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.bytes -= e.bytes;
  }

  /** Bytes of the shared chunks kept. */
  get heldBytes(): number {
    return this.bytes;
  }
}
