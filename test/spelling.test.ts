import { test } from 'node:test';
import assert from 'node:assert/strict';
import { correctSpelling, spellingCorrections, writtenAsWord, type SyncVocabulary } from '../server/search/spelling.ts';
import { rng } from './helpers/rng.ts';
import { TUNING } from '../server/search/tuning.ts';
import { analyzeQuery, type PreparedQuery } from '../server/search/query.ts';

/** Two versions' term indexes: term -> documents holding it. */
const versions: Record<number, Record<string, number>> = {
  1: {
    serializer: 40,
    serializers: 12,
    route: 90,
    register: 30,
    redact: 7,
    reduce: 30,
    cache: 20,
    catching: 3,
    schema: 50,
    behavior: 8,
    customize: 5,
    canceled: 2,
    catalog: 4,
    license: 6,
  },
  2: { redact: 2, redacts: 1, redcap: 9, logger: 60 },
};

const vocabulary: SyncVocabulary = {
  firstHeld: (vs, lists) => lists.map((terms) => terms.find((term) => vs.some((v) => (versions[v]?.[term] ?? 0) > 0)) ?? null),
  termsStartingWith: (v, first, min, max) =>
    new Map(Object.entries(versions[v] ?? {}).filter(([t]) => t.startsWith(first) && t.length >= min && t.length <= max)),
};

/** English words rank before TUNING.wordRarity.typoRank; anything else is rarer (a typo, a name). */
const english = new Set([
  'custom',
  'sensitive',
  'fields',
  'refuse',
  'caching',
  'route',
  'reduce',
  'behaviour',
  'customise',
  'cancelled',
  'catalogue',
  'licence',
  'promise',
  'hours',
]);
const rarity = (w: string) => Math.log(2 + (english.has(w) ? 1_000 : TUNING.wordRarity.typoRank + 1));

const question = (text: string): PreparedQuery => ({ ...analyzeQuery(text), vector: new Float32Array([1, 0]) });

test('a word no version holds and English does not know is read as the closest word the versions hold', () => {
  assert.deepEqual(spellingCorrections(question('custom serilaizer for a route'), vocabulary, rarity, [1]), [{ from: 'serilaizer', to: 'serializer' }]);
  // Also the member of a dotted identifier; the corrected question asks for the identifier's joined token.
  const dotted = correctSpelling(question('fastify.regsiter(plugin)'), vocabulary, rarity, [1]);
  assert.deepEqual(dotted.corrections, [{ from: 'regsiter', to: 'register' }]);
  assert.ok(dotted.q.terms.includes('fastifyregister'));
  // Swapped letters are one edit, as is one wrong letter; among words as close, the one more
  // documents of the versions searched hold, then the first in alphabetical order.
  assert.deepEqual(spellingCorrections(question('redcat sensitive fields'), vocabulary, rarity, [2]), [{ from: 'redcat', to: 'redcap' }]);
  assert.deepEqual(spellingCorrections(question('redcat sensitive fields'), vocabulary, rarity, [1, 2]), [{ from: 'redcat', to: 'redact' }]);
});

test('a British spelling is read as the American one the documents use', () => {
  assert.deepEqual(spellingCorrections(question('customise the behaviour when a request is cancelled'), vocabulary, rarity, [1]), [
    { from: 'customise', to: 'customize' },
    { from: 'behaviour', to: 'behavior' },
    { from: 'cancelled', to: 'canceled' },
  ]);
  assert.deepEqual(spellingCorrections(question('plugin catalogue and licence'), vocabulary, rarity, [1]), [
    { from: 'catalogue', to: 'catalog' },
    { from: 'licence', to: 'license' },
  ]);
  // Only to a spelling the documents hold: "promize" is nobody's word.
  assert.deepEqual(spellingCorrections(question('a promise that resolves in hours'), vocabulary, rarity, [1]), []);
});

test('words left as written: English words, held words and their forms, short words, identifiers, no close word', () => {
  for (const text of [
    'refuse uploads that are too big', // English, though no version holds it
    'the serializer of a route', // held
    'caching a schema', // "cache" is held: a form, not a typo
    'rout', // under 5 letters
    'customSerilaizer and serilaizer_options', // identifiers
    'kubectl annotations', // nothing close
  ]) {
    assert.deepEqual(spellingCorrections(question(text), vocabulary, rarity, [1, 2]), [], text);
  }
});

test('the corrected question is analyzed again; the question as asked and its embedding are kept', () => {
  const q = question('Serilaizer for one route');
  const { q: corrected, corrections } = correctSpelling(q, vocabulary, rarity, [1]);
  assert.deepEqual(corrections, [{ from: 'serilaizer', to: 'serializer' }]);
  assert.ok(corrected.terms.includes('serializer') && !corrected.terms.includes('serilaizer'));
  assert.ok(corrected.termForms.some((forms) => forms.includes('serializers')));
  assert.equal(corrected.text, 'Serilaizer for one route');
  assert.equal(corrected.vector, q.vector);
  // Without the word table a typo cannot be told from a word: the question is left alone.
  assert.equal(correctSpelling(q, vocabulary, null, [1]).q, q);
});

test('writtenAsWord finds what the expression it replaced finds: a standalone word or dotted member, written as prose', () => {
  // The expression spelling used before (still how correctSpelling replaces a word).
  const expression = (word: string, text: string) =>
    [...text.matchAll(new RegExp(`(?:(?<![\\w$.@/-])|(?<=[\\w$]\\.))${word}(?![\\w$])`, 'gi'))].some((m) => /^[A-Za-z][a-z]*$/.test(m[0]));
  assert.equal(writtenAsWord('register', 'fastify.register(plugin)'), true);
  assert.equal(writtenAsWord('register', 'use Register here'), true);
  assert.equal(writtenAsWord('register', 'REGISTER or reGister'), false);
  assert.equal(writtenAsWord('serilaizer', 'a customSerilaizer'), false);
  assert.equal(writtenAsWord('flag', 'pass --flag'), false);
  const r = rng(3);
  // Letters in both cases, the boundary characters, and letters whose case mapping leaves ASCII (İ ı ſ K).
  const alphabet = 'abcABC .-@/$_9x\u0130\u0131\u017f\u212aKk(';
  for (let i = 0; i < 50_000; i++) {
    const word = Array.from({ length: 1 + Math.floor(r() * 3) }, () => 'abck'[Math.floor(r() * 4)]).join('');
    const text = Array.from({ length: Math.floor(r() * 14) }, () => alphabet[Math.floor(r() * alphabet.length)]).join('');
    assert.equal(writtenAsWord(word, text), expression(word, text), `${JSON.stringify(word)} in ${JSON.stringify(text)}`);
  }
});
