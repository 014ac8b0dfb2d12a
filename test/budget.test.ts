import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pack } from '../server/search/budget.ts';
import { TUNING } from '../server/search/tuning.ts';
import type { Candidate } from '../server/search/retrieve.ts';
import type { StoredSnippet } from '../lib/model.ts';

const WEAK_TAIL = TUNING.budget.weakTail;

/** A ranked candidate with only what pack reads: kind, section, tokens and the probability of answering. */
function ranked(id: number, kind: 'code' | 'info', score: number, tokens = 100, section = `s${id}`): Candidate {
  const snippet = { id, versionId: 1, kind, sourceId: `https://example.com/#${section}`, tokens } as StoredSnippet;
  return { snippet, libraryId: '/acme/lib', bm25: null, lexical: 0, cosine: 0, similarity: null, lexicalRank: null, vectorRank: null, fused: 0, score };
}
const ids = (xs: Candidate[]) => xs.map((c) => c.snippet.id);

test('weak tails are dropped, not padded; the first snippet is always taken', () => {
  const list = [
    ranked(1, 'code', 0.3),
    ranked(2, 'info', 0.2),
    ranked(3, 'code', 0.1),
    ranked(4, 'info', 0.05),
    ranked(5, 'code', 0.04),
    ranked(6, 'info', 0.02),
    ranked(7, 'info', 0.01),
  ];
  // Past the first five, a snippet under a tenth of the best ends the answer.
  assert.deepEqual(ids(pack(list)), [1, 2, 3, 4, 5]);
  assert.deepEqual(ids(pack([ranked(1, 'info', 0.9, 99_999)])), [1], 'a best snippet over the budget is still answered');
});

test("the first five kept are five sections: a section's second snippet does not use up a place", () => {
  // Ids 1 and 2 are one section (the text layout shows them as one block), so the weak 6 is still
  // one of the first five places; 7 is past them and ends the answer.
  const list = [
    ranked(1, 'info', 0.3, 100, 'a'),
    ranked(2, 'info', 0.2, 100, 'a'),
    ranked(3, 'info', 0.1),
    ranked(4, 'info', 0.05),
    ranked(5, 'info', 0.04),
    ranked(6, 'info', 0.02),
    ranked(7, 'info', 0.01),
  ];
  assert.deepEqual(ids(pack(list)), [1, 2, 3, 4, 5, 6]);
});

test('when the best snippet is confident, weak code is left out anywhere; weak prose stays until the tail', () => {
  const best = WEAK_TAIL.confident + 0.1;
  const weak = best * WEAK_TAIL.ratio * 0.5;
  const list = [
    ranked(1, 'info', best, 100, 'a'),
    ranked(2, 'code', weak),
    ranked(3, 'info', weak),
    ranked(4, 'code', best * 0.2),
    ranked(5, 'code', best, 100, 'a'),
  ];
  assert.deepEqual(ids(pack(list)), [1, 3, 4, 5], 'a client listing code first would have shown the weak code first');
  // Not confident: every probability is low, and the weak code may be the answer (paraphrased questions).
  const unsure = [ranked(1, 'info', 0.2, 100, 'a'), ranked(2, 'code', 0.01), ranked(3, 'info', 0.01), ranked(4, 'code', 0.01, 100, 'a')];
  assert.deepEqual(ids(pack(unsure)), [1, 2, 3, 4]);
});

test('when the best snippet is prose without code of its section, code under half its probability is left out', () => {
  const list = [ranked(1, 'info', 0.4), ranked(2, 'code', 0.3), ranked(3, 'code', 0.19), ranked(4, 'info', 0.1)];
  assert.deepEqual(ids(pack(list)), [1, 2, 4], "a code-first client would have led with another section's example");
  // Its section has code in the answer: the example leads, the rest stays.
  const withCode = [ranked(1, 'info', 0.4, 100, 'a'), ranked(2, 'code', 0.4, 100, 'a'), ranked(3, 'code', 0.19), ranked(4, 'info', 0.1)];
  assert.deepEqual(ids(pack(withCode)), [1, 2, 3, 4]);
  assert.equal(WEAK_TAIL.proseFirst, 0.5);
});
