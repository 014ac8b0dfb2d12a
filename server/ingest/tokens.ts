import { countTokens as bpeCount } from 'gpt-tokenizer';

/** Token count with a real BPE tokenizer (o200k, as GPT-4o class models count). */
export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  return bpeCount(text);
}
