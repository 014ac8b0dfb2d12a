import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { loadCorpus, evaluate, formatTable } from './eval/run.ts';
import { QUESTIONS } from './eval/questions.ts';
import { REAL_MODEL } from './helpers/server.ts';

// A quick sanity run of the retrieval evaluation (the full one is `npm run eval`): the pino corpus
// and its questions, every mode produces rankings, and the shipped pipeline finds most answers.
test('eval sanity: pino questions through the shipped pipeline', async () => {
  const { services, dataDir } = await loadCorpus(['pino'], REAL_MODEL);
  try {
    const questions = QUESTIONS.filter((q) => q.libraryId === '/pinojs/pino');
    assert.ok(questions.length >= 10);
    const r = await evaluate(services, questions);
    const table = formatTable(r);
    assert.equal(r.overall['hybrid+rerank'].n, questions.length, table);
    assert.ok(r.hasVectors, 'the sentence model is configured');
    assert.ok(r.overall['hybrid+rerank'].hit5 >= 0.6, table);
    assert.ok(r.overall['hybrid+rerank'].mrr10 >= 0.4, table);
    assert.ok(r.overall.vectors.hit5 > 0, table);
  } finally {
    services.store.close();
    await services.embedder?.close?.();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
