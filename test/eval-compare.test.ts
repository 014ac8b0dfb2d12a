import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareRuns, mrrInterval, pairedDelta, type SavedRank } from './eval/compare.ts';

test('eval --compare: the paired bootstrap tells a real change from noise, deterministically', () => {
  const same = [1, 2, null, 3, 1, 5, null, 1];
  assert.deepEqual(pairedDelta(same, same), { n: 8, delta: 0, low: 0, high: 0, better: 0, worse: 0 });

  // 200 questions: 60 moved from rank 2 to rank 1, none down. A clear gain: the interval excludes 0.
  const before = Array.from({ length: 200 }, (_, i) => (i < 60 ? 2 : 1));
  const up = pairedDelta(
    before,
    before.map(() => 1),
  );
  assert.equal(up.better, 60);
  assert.equal(up.worse, 0);
  assert.ok(Math.abs(up.delta - 0.15) < 1e-9);
  assert.ok(up.low > 0 && up.high > up.low, JSON.stringify(up));

  // Two questions up and two down by a similar amount: the interval spans 0.
  const mixedBefore = Array.from({ length: 200 }, (_, i) => (i < 2 ? 3 : 1));
  const mixedAfter = mixedBefore.map((r, i) => (i < 2 ? 1 : i < 4 ? 3 : r));
  const mixed = pairedDelta(mixedBefore, mixedAfter);
  assert.equal(mixed.delta, 0);
  assert.ok(mixed.low < 0 && mixed.high > 0, JSON.stringify(mixed));
  assert.deepEqual(pairedDelta(mixedBefore, mixedAfter), mixed, 'the same runs give the same interval');

  assert.throws(() => pairedDelta([1], [1, 2]), /same questions/);
});

test('eval --compare: questions are matched by id; kinds get rows of their own', () => {
  const row = (id: string, kind: string, r: number | null): SavedRank => ({ id, kind, search: r, searchJson: r, context: r, contextJson: r });
  const before = [row('a', 'plain', 2), row('b', 'plain', 1), row('gone', 'plain', 1)];
  const after = [row('b', 'plain', 1), row('a', 'plain', 1), row('new', 'error', null), row('o', 'offtopic', null)];
  before.push(row('o', 'offtopic', null));
  const lines = compareRuns(before, after);
  assert.match(lines[0]!, /in both runs: 2/);
  const all = lines.find((l) => l.startsWith('search ') && l.includes(' all '))!;
  assert.match(all, /\+0\.250 .*1 up \/ 0 down/);
  assert.ok(lines.some((l) => l.startsWith('contextJson') && l.includes('kind plain')));
  assert.ok(!lines.some((l) => l.includes('kind error')), 'a question only the new run has is not compared');
  assert.ok(!lines.some((l) => l.includes('kind offtopic')), 'off-topic questions have no rank');
});

test('eval: the MRR@10 of one run comes with a bootstrap interval that narrows with more questions', () => {
  const ranks = (n: number) => Array.from({ length: n }, (_, i) => (i % 4 === 0 ? null : (i % 3) + 1));
  const ten = mrrInterval(ranks(10));
  const many = mrrInterval(ranks(400));
  for (const i of [ten, many]) assert.ok(i.low <= i.mrr && i.mrr <= i.high && i.low < i.high, JSON.stringify(i));
  assert.ok(many.high - many.low < (ten.high - ten.low) / 3, `400 questions: ${JSON.stringify(many)}; 10: ${JSON.stringify(ten)}`);
  assert.deepEqual(mrrInterval([1, 1, 1]), { n: 3, mrr: 1, low: 1, high: 1 });
  assert.deepEqual(mrrInterval(ranks(10)), ten, 'deterministic');
});
