import { createRequire } from 'node:module';

type Counter = (text: string) => number;

/**
 * The BPE tables take about half a second to load: loaded on the first count (an ingestion or a
 * research answer), not by every process that imports the writer (each CLI command, each search worker).
 */
let bpeCount: Counter | null = null;

/** Token count with a real BPE tokenizer (o200k, as GPT-4o class models count). */
export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  bpeCount ??= (createRequire(import.meta.url)('gpt-tokenizer') as { countTokens: Counter }).countTokens;
  return bpeCount(text);
}
