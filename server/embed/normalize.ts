/** Scales a vector to unit length in place (cosine search expects unit vectors). A zero vector stays zero. */
export function normalize(v: Float32Array): Float32Array {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * v[i]!;
  if (s > 0) {
    const inv = 1 / Math.sqrt(s);
    for (let i = 0; i < v.length; i++) v[i] = v[i]! * inv;
  }
  return v;
}
