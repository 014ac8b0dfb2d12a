/** A seeded pseudo-random generator in [0, 1) (a 32-bit LCG): tests and benchmarks draw the same data on every run. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}
