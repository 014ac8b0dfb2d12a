/**
 * 8-bit copies of embeddings for the vector scan (server/search/vector-scan.ts). Each vector is
 * scaled so its largest component is +-127; cosine similarity does not depend on the scale, so
 * only the quantized vector's own norm is kept with it. Cosine similarities from these copies
 * differ from the float vectors' by about 0.002 (test/vector-scan.test.ts).
 */
export function quantizeInto(v: Float32Array, out: Int8Array, at: number): number {
  let max = 0;
  for (let i = 0; i < v.length; i++) max = Math.max(max, Math.abs(v[i]!));
  if (max === 0) return 0;
  const scale = 127 / max;
  let sq = 0;
  for (let i = 0; i < v.length; i++) {
    const q = Math.round(v[i]! * scale);
    out[at + i] = q;
    sq += q * q;
  }
  return Math.sqrt(sq);
}
