import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderText, TEXT_SEPARATOR, type RenderItem } from '../server/search/render.ts';
import { pack } from '../server/search/budget.ts';
import type { Candidate } from '../server/search/retrieve.ts';
import type { StoredSnippet } from '../lib/model.ts';

const prose = (id: number, anchor: string, content: string): StoredSnippet =>
  ({ id, versionId: 1, kind: 'info', sourceId: `https://lib.example/guide#${anchor}`, breadcrumb: `Guide > ${anchor}`, content, tokens: 20 }) as StoredSnippet;
const code = (id: number, anchor: string, description: string, source: string): StoredSnippet =>
  ({
    id,
    versionId: 1,
    kind: 'code',
    sourceId: `https://lib.example/guide#${anchor}`,
    title: anchor,
    description,
    codeList: [{ language: 'js', code: source }],
    tokens: 20,
  }) as StoredSnippet;

test("text layout: the context pulled in for a hit is in that hit's block, so the n-th block is the n-th hit", () => {
  const items: RenderItem[] = [
    { snippet: prose(1, 'redaction', 'Supply paths to keys that hold sensitive data.'), libraryId: '/acme/lib' },
    { snippet: code(2, 'redaction~2', 'With the redact option:', "pino({ redact: ['password'] })"), libraryId: '/acme/lib', via: 'sibling' },
    { snippet: prose(3, 'levels', 'Levels are numbers.'), libraryId: '/acme/lib' },
  ];
  const blocks = renderText(items).split(TEXT_SEPARATOR);
  assert.equal(blocks.length, 2);
  assert.equal(
    blocks[0],
    [
      '### Guide > redaction',
      'Source: https://lib.example/guide#redaction',
      'Supply paths to keys that hold sensitive data.',
      'Context: https://lib.example/guide#redaction~2',
      'With the redact option:',
      "```js\npino({ redact: ['password'] })\n```",
    ].join('\n\n'),
  );
  assert.equal(blocks[1], ['### Guide > levels', 'Source: https://lib.example/guide#levels', 'Levels are numbers.'].join('\n\n'));
  // Code pulled in for prose that already holds its description shows only the code.
  const repeated: RenderItem[] = [
    { snippet: prose(1, 'redaction', 'Supply paths to keys that hold sensitive data. With the redact option:'), libraryId: '/acme/lib' },
    items[1]!,
  ];
  assert.ok(renderText(repeated).endsWith("Context: https://lib.example/guide#redaction~2\n\n```js\npino({ redact: ['password'] })\n```"));
  // With nothing before it, context is shown as a snippet of its own rather than lost.
  assert.match(renderText(items.slice(1)), /^### redaction~2\n\nSource: https:\/\/lib\.example\/guide#redaction~2/);
});

test('text layout: a section is one block; its later snippets, and the context they brought, join its first one', () => {
  const items: RenderItem[] = [
    { snippet: prose(1, 'redaction', 'Supply paths to keys that hold sensitive data.'), libraryId: '/acme/lib' },
    { snippet: prose(2, 'levels', 'Levels are numbers.'), libraryId: '/acme/lib' },
    { snippet: code(3, 'redaction~2', 'Censor with a function:', 'censor: () => 1'), libraryId: '/acme/lib' },
    { snippet: prose(4, 'serializers', 'Serializers shape objects.'), libraryId: '/acme/lib', via: 'link' },
    { snippet: prose(5, 'transports', 'Transports run in a worker.'), libraryId: '/acme/lib' },
    // The same address in another version is another section.
    { snippet: { ...prose(6, 'levels', 'Levels in v2.'), versionId: 2 }, libraryId: '/acme/lib' },
  ];
  const blocks = renderText(items).split(TEXT_SEPARATOR);
  const urls = blocks.map((b) => [...b.matchAll(/^(?:Source|Context): (\S+)$/gm)].map((m) => m[1]!.replace('https://lib.example/guide', '')));
  assert.deepEqual(urls, [['#redaction', '#redaction~2', '#serializers'], ['#levels'], ['#transports'], ['#levels']]);
  // Every snippet is still there, once.
  assert.equal(blocks.join('').match(/(?:Source|Context): /g)!.length, items.length);
});

test('the budget keeps context only with its hit', () => {
  const candidate = (snippet: StoredSnippet, score: number, via?: 'sibling'): Candidate => ({
    snippet,
    libraryId: '/acme/lib',
    bm25: null,
    lexical: 0,
    cosine: 0,
    similarity: null,
    lexicalRank: null,
    vectorRank: null,
    fused: 0,
    score,
    ...(via ? { via } : {}),
  });
  const big = { ...prose(2, 'long', 'a long section'), tokens: 400 } as StoredSnippet;
  const list = [
    candidate(prose(1, 'a', 'first'), 0.9),
    candidate(big, 0.8),
    candidate(code(3, 'long~2', 'its example', 'x()'), 0.8, 'sibling'),
    candidate(prose(4, 'b', 'third'), 0.7),
  ];
  // The long section does not fit; its example would otherwise stand in the answer as if it were a hit.
  assert.deepEqual(
    pack(list, { tokens: 100 }).map((c) => c.snippet.id),
    [1, 4],
  );
  assert.deepEqual(
    pack(list, { tokens: 1000 }).map((c) => c.snippet.id),
    [1, 2, 3, 4],
  );
});
