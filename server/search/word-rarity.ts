/**
 * How rare a word is in English, from the builtin word table: the "nothing found" decision weighs a
 * question's words by it, and spelling correction tells a typo from a word with it.
 */

/** Weight of a word by its rarity in English, ln(2 + its frequency rank) (larger: rarer); words outside the table are the rarest. */
export type WordRarity = (word: string) => number;

/**
 * A word the word table ranks beyond this many more frequent ones (or does not hold) may be a
 * typo: past it the table holds mostly misspellings, names and joined words ("enviroment",
 * "redcat"); the everyday and technical words of questions rank before it ("resizing" 136,000).
 */
export const TYPO_RANK = 150_000;

/** True when the word table ranks the word among its TYPO_RANK most frequent: an English word or a well-known name. */
export function isEnglishWord(rarity: WordRarity, word: string): boolean {
  return rarity(word) < Math.log(2 + TYPO_RANK);
}
