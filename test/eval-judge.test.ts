import { test } from 'node:test';
import assert from 'node:assert/strict';
import { carryOver, compactPack, firstSnippets, judgedFigures, type PackEntry } from './eval/judge.ts';

test('judged figures: a listed first snippet counts as first, a verdict replaces the address rank, no answer in five keeps a rank of 6-10', () => {
  const entries: PackEntry[] = [
    { id: 'a', set: 's1', urlRank: 1 },
    { id: 'b', set: 's1', urlRank: 3 },
    { id: 'c', set: 's1', urlRank: null },
    { id: 'd', set: 's2', urlRank: 8 },
    { id: 'e', set: 's2', urlRank: 2 },
  ];
  const rows = judgedFigures(entries, [
    { id: 'b', first: 1 },
    { id: 'c', first: 4 },
    { id: 'd', first: null },
  ]);
  const s1 = rows.find((r) => r.set === 's1')!;
  assert.deepEqual(s1.byAddress, { n: 3, hit1: 1 / 3, hit5: 2 / 3, mrr10: (1 + 1 / 3) / 3 });
  assert.deepEqual(s1.byJudge, { n: 3, hit1: 2 / 3, hit5: 1, mrr10: (1 + 1 + 1 / 4) / 3 });
  const s2 = rows.find((r) => r.set === 's2')!;
  // d: the judge found nothing in five, the listed address at 8 still counts; e is not judged yet.
  assert.equal(s2.byJudge.mrr10, (1 / 8 + 1 / 2) / 2);
  assert.equal(s2.unjudged, 1);
  assert.equal(rows.find((r) => r.set === 'all')!.n, 5);

  // Grouped otherwise (by kind of question): the rows follow the groups across sets.
  const kind: Record<string, string> = { a: 'plain', b: 'paraphrase', c: 'paraphrase', d: 'plain', e: 'paraphrase' };
  const byKind = judgedFigures(
    entries,
    [
      { id: 'b', first: 1 },
      { id: 'c', first: 4 },
      { id: 'd', first: null },
    ],
    (e) => kind[e.id]!,
  );
  assert.deepEqual(
    byKind.map((r) => `${r.set} ${r.n}`),
    ['paraphrase 3', 'plain 2', 'all 5'],
  );
  assert.deepEqual(byKind[0]!.byJudge, { n: 3, hit1: 1 / 3, hit5: 1, mrr10: (1 + 1 / 4 + 1 / 2) / 3 });
});

test('the first five snippets of a text answer, split at the separator lines', () => {
  const body = ['### A\nSource: a', '### B\nSource: b', 'c', 'd', 'e', 'f'].join('\n\n--------------------------------\n\n');
  const got = firstSnippets(body, 5);
  assert.equal(got.length, 5);
  assert.deepEqual(got[1], { rank: 2, text: '### B' });
});

test('verdicts carry over to a new pack only for answers that did not change', () => {
  const five = (t: string) => [1, 2, 3, 4, 5].map((rank) => ({ rank, text: `${t}${rank}` }));
  const earlier: PackEntry[] = [
    { id: 'same', set: 's', urlRank: 3, snippets: five('a') },
    { id: 'changed', set: 's', urlRank: 2, snippets: five('b') },
    { id: 'unread', set: 's', urlRank: 4, snippets: five('c') },
    { id: 'now-first', set: 's', urlRank: 2, snippets: five('d') },
  ];
  const pack: PackEntry[] = [
    { id: 'same', set: 's', urlRank: 3, snippets: five('a') },
    { id: 'changed', set: 's', urlRank: 2, snippets: five('B') },
    { id: 'unread', set: 's', urlRank: 4, snippets: five('c') },
    { id: 'now-first', set: 's', urlRank: 1 },
    { id: 'new', set: 's', urlRank: null, snippets: five('e') },
  ];
  const verdicts = [
    { id: 'same', first: 2 },
    { id: 'changed', first: null },
    { id: 'now-first', first: 1 },
  ];
  const { reused, toJudge } = carryOver(pack, { entries: earlier, verdicts });
  assert.deepEqual(reused, [{ id: 'same', first: 2 }]);
  assert.deepEqual(
    toJudge.map((e) => e.id),
    ['changed', 'unread', 'new'],
  );
  // A stored pack keeps only the blocks' hashes, and reads the same.
  const stored = compactPack(earlier);
  assert.equal(stored[0]!.snippets, undefined);
  assert.deepEqual(carryOver(pack, { entries: stored, verdicts }), { reused, toJudge });
});

test('a verdict also carries over when the blocks up to the answer it names are the same', () => {
  const five = (t: string) => [1, 2, 3, 4, 5].map((rank) => ({ rank, text: `${t}${rank}` }));
  const after = (t: string, from: number) => five('a').map((s) => (s.rank >= from ? { ...s, text: `${t}${s.rank}` } : s));
  const earlier: PackEntry[] = ['tail', 'at-answer', 'none', 'short'].map((id) => ({ id, set: 's', urlRank: 3, snippets: five('a') }));
  earlier[3]!.snippets = five('a').slice(0, 2);
  const pack: PackEntry[] = [
    { id: 'tail', set: 's', urlRank: 3, snippets: after('x', 3) },
    { id: 'at-answer', set: 's', urlRank: 3, snippets: after('x', 2) },
    { id: 'none', set: 's', urlRank: 3, snippets: after('x', 5) },
    { id: 'short', set: 's', urlRank: 3, snippets: five('a') },
  ];
  const verdicts = [
    { id: 'tail', first: 2 },
    { id: 'at-answer', first: 2 },
    { id: 'none', first: null },
    { id: 'short', first: 2 },
  ];
  const { reused, toJudge } = carryOver(pack, { entries: compactPack(earlier), verdicts });
  // Blocks 1-2 unchanged: the answer at 2 holds. The answer block changed, or nothing was found
  // and any block changed: judged again. A short answer that grew keeps its answer at 2.
  assert.deepEqual(reused, [
    { id: 'tail', first: 2 },
    { id: 'short', first: 2 },
  ]);
  assert.deepEqual(
    toJudge.map((e) => e.id),
    ['at-answer', 'none'],
  );
});
