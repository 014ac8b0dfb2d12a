import fs from 'node:fs';

type L2sq = (q: number, mask: number, base: number, n: number, dims: number, out: number) => void;

/** The kernel, compiled once per thread and instantiated once per memory it scans (an instance lives as long as its memory). */
let compiled: WebAssembly.Module | null = null;
const kernels = new WeakMap<WebAssembly.Memory, L2sq>();

function kernelFor(memory: WebAssembly.Memory): L2sq {
  let k = kernels.get(memory);
  if (!k) {
    compiled ??= new WebAssembly.Module(fs.readFileSync(new URL('./int8-l2.wasm', import.meta.url)));
    k = (new WebAssembly.Instance(compiled, { env: { memory } }).exports as unknown as { l2sq: L2sq }).l2sq;
    kernels.set(memory, k);
  }
  return k;
}

const PAGE = 65536;
/** A shared memory must declare its largest size: this thread's own one may grow to 4 GB of address space (only what is used is memory). */
const MAX_PAGES = 65536;
/** This thread's own memory, into which vectors kept elsewhere are copied to be scanned. */
let own: WebAssembly.Memory | null = null;

function ownMemory(bytes: number): WebAssembly.Memory {
  const pages = Math.ceil(bytes / PAGE);
  own ??= new WebAssembly.Memory({ initial: pages, maximum: MAX_PAGES, shared: true });
  if (own.buffer.byteLength < bytes) own.grow(pages - own.buffer.byteLength / PAGE);
  return own;
}

/**
 * Bytes of the kernel's working area for `dims`-dimensional vectors in blocks of up to `slots`:
 * the mask (16), the query padded to 16 bytes, 16 of slack, then one 32-bit distance per slot.
 * A multiple of 16, so that areas laid end to end stay aligned.
 */
export function scratchBytes(dims: number, slots: number): number {
  return align(16 + align(dims, 16) + 16 + 4 * slots, 16);
}

/**
 * Vectors that lie in a shared WebAssembly memory (server/search/shared-vectors.ts packs a
 * version's chunks so): the kernel scans them where they are instead of copying them into this
 * thread's memory first (the copy cost as much as the scan). `scratch`: the byte offset of this
 * thread's own working area in that memory, scratchBytes(dims, the largest block) long; other
 * threads scan the same memory at the same time, each in its own area. At least 16 bytes must
 * follow the last vector in the memory (the kernel's last load may read past it).
 */
export interface InPlace {
  memory: WebAssembly.Memory;
  scratch: number;
}

/** One neighbour found: which block (in the order given) and slot, and its squared 8-bit L2 distance. */
export interface Int8Neighbour {
  block: number;
  slot: number;
  l2sq: number;
}

/**
 * The k nearest 8-bit vectors to a query, fed block by block (sqlite-vec stores a partition's
 * vectors in chunks of up to 1024): the squared L2 distances come from the WebAssembly SIMD kernel
 * int8-l2.wat, 16 dimensions per instruction, and a sorted list of the best k is kept in JS. Ties
 * keep the vector seen first. Exact integer arithmetic: the neighbours of sqlite-vec's own KNN on
 * an `int8[dims] distance_metric=l2` table (`npm run bench -- knn` compares both).
 */
export class Int8Nearest {
  private readonly dims: number;
  private readonly query: Uint8Array;
  private readonly keys: number[] = [];
  private readonly refs: Int8Neighbour[] = [];
  private blocks = 0;

  constructor(
    query: Int8Array,
    private readonly k: number,
  ) {
    if (query.length === 0 || query.length > 4096) throw new RangeError(`8-bit query of ${query.length} dimensions (1-4096 supported)`);
    this.dims = query.length;
    this.query = new Uint8Array(query.buffer, query.byteOffset, query.length);
  }

  /**
   * Scores the first `count` vectors of one block (count x dims bytes); a slot whose bit in `validity`
   * (LSB first, as sqlite-vec writes it) is clear is skipped. `inPlace`: where `vectors` lie, when
   * they are views of a shared memory laid out for the kernel.
   */
  add(vectors: Uint8Array, count: number, validity: Uint8Array | null = null, inPlace: InPlace | null = null): void {
    const block = this.blocks++;
    const bytes = count * this.dims;
    if (count <= 0 || vectors.length < bytes) return;
    let memory: WebAssembly.Memory;
    let scratch: number;
    let base: number;
    if (inPlace) {
      memory = inPlace.memory;
      scratch = inPlace.scratch;
      base = vectors.byteOffset;
      if (base + bytes + 16 > memory.buffer.byteLength) throw new RangeError('vectors outside the memory given to scan them in');
    } else {
      scratch = 0;
      base = scratchBytes(this.dims, count);
      memory = ownMemory(base + bytes + 16);
      new Uint8Array(memory.buffer, base, bytes).set(vectors.subarray(0, bytes));
    }
    const buffer = memory.buffer;
    const padded = align(this.dims, 16);
    // The mask and query are written on every call: another search may have used this area since.
    const head = new Uint8Array(buffer, scratch, 16 + padded);
    head.fill(0);
    head.fill(0xff, 0, this.dims % 16);
    head.set(this.query, 16);
    const out = scratch + 32 + padded;
    kernelFor(memory)(scratch + 16, scratch, base, count, this.dims, out);
    const d = new Int32Array(buffer, out, count);
    const { k, keys, refs } = this;
    for (let slot = 0; slot < count; slot++) {
      const key = d[slot]!;
      if (keys.length === k && key >= keys[k - 1]!) continue;
      if (validity && !(validity[slot >> 3]! & (1 << (slot & 7)))) continue;
      // Insert after every equal key, so ties keep arrival order.
      let i = keys.length;
      while (i > 0 && keys[i - 1]! > key) i--;
      keys.splice(i, 0, key);
      refs.splice(i, 0, { block, slot, l2sq: key });
      if (keys.length > k) {
        keys.pop();
        refs.pop();
      }
    }
  }

  /** The nearest vectors so far, nearest first. */
  best(): Int8Neighbour[] {
    return this.refs.slice();
  }
}

function align(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}
