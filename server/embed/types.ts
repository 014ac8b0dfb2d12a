/** Turns texts into unit-length vectors of a fixed dimension. */
export interface Embedder {
  /** Identifies provider, model and dimension; stored with the vectors so a change triggers re-embedding. */
  readonly id: string;
  readonly dims: number;
  embed(texts: string[]): Promise<Float32Array[]>;
}
