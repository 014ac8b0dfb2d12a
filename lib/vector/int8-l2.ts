import fs from 'node:fs';

interface Kernel {
  memory: WebAssembly.Memory;
  l2sq: (q: number, mask: number, base: number, n: number, dims: number, out: number) => void;
}

/** One kernel instance (and memory) per thread, shared by every search: the calls are synchronous. */
let instance: Kernel | null = null;

function kernel(): Kernel {
  instance ??= new WebAssembly.Instance(new WebAssembly.Module(fs.readFileSync(new URL('./int8-l2.wasm', import.meta.url))), {}).exports as unknown as Kernel;
  return instance;
}

const PAGE = 65536;
const BASE = 16 + 4096 + 16; // mask, query (up to 4096 dims, padded), slack

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
  private readonly keys: number[] = [];
  private readonly refs: Int8Neighbour[] = [];
  private blocks = 0;

  constructor(
    private readonly query: Int8Array,
    private readonly k: number,
  ) {
    if (query.length === 0 || query.length > 4096) throw new RangeError(`8-bit query of ${query.length} dimensions (1-4096 supported)`);
    this.dims = query.length;
  }

  /**
   * Scores the first `count` vectors of one block (count x dims bytes); a slot whose bit in `validity`
   * (LSB first, as sqlite-vec writes it) is clear is skipped.
   */
  add(vectors: Uint8Array, count: number, validity: Uint8Array | null = null): void {
    const block = this.blocks++;
    const bytes = count * this.dims;
    if (count <= 0 || vectors.length < bytes) return;
    const out = BASE + align(bytes + 16, 4); // 16: the kernel's last load may read past the block
    const kern = kernel();
    if (kern.memory.buffer.byteLength < out + 4 * count) kern.memory.grow(Math.ceil((out + 4 * count - kern.memory.buffer.byteLength) / PAGE));
    const mem = kern.memory.buffer;
    // The query and mask are written on every call: another search may have used the kernel since.
    const head = new Uint8Array(mem, 0, BASE);
    head.fill(0);
    head.fill(0xff, 0, this.dims % 16);
    new Int8Array(mem, 16, this.dims).set(this.query);
    new Uint8Array(mem, BASE, bytes).set(vectors.subarray(0, bytes));
    kern.l2sq(16, 0, BASE, count, this.dims, out);
    const d = new Int32Array(mem, out, count);
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
