/**
 * How rare a word is in English, from the builtin word table: the "nothing found" decision weighs a
 * question's words by it, and spelling correction tells a typo from a word with it.
 */
import { TUNING } from './tuning.ts';

/** Weight of a word by its rarity in English, ln(2 + its frequency rank) (larger: rarer); words outside the table are the rarest. */
export type WordRarity = (word: string) => number;

/** True when the word table ranks the word among its TUNING.wordRarity.typoRank most frequent: an English word or a well-known name. */
export function isEnglishWord(rarity: WordRarity, word: string): boolean {
  return rarity(word) < Math.log(2 + TUNING.wordRarity.typoRank);
}
