/** `query`: a question someone waits for; `background`: the embed job's batches, which must never delay one. */
export type EmbedPriority = 'query' | 'background';

/** Turns texts into unit-length vectors of a fixed dimension. */
export interface Embedder {
  /** Identifies provider, model and dimension; stored with the vectors so a change triggers re-embedding. */
  readonly id: string;
  readonly dims: number;
  /**
   * True when embedding is too slow to do while writing (the sentence model): imports, crawls and
   * Git sources store snippets without vectors and the embed job fills them per version afterwards.
   */
  readonly deferred?: boolean;
  /**
   * True for a model that embeds what a text means as a whole (the sentence model, an endpoint's
   * model), false or absent for word vectors averaged: only the former is trusted on its own when a
   * question shares no word with its answer (server/search/learn.ts).
   */
  readonly sentenceEncoder?: boolean;
  embed(texts: string[], priority?: EmbedPriority): Promise<Float32Array[]>;
  /** Stops worker threads or connections (the server's shutdown). */
  close?(): Promise<void>;
}
