import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, tempDir } from './helpers/server.ts';
import { bundlePath, loadBundleFile } from './eval/bundles.ts';
import { textSources } from './eval/http.ts';
import { learnInWorker } from '../server/search/learn-thread.ts';
import { learnModel } from '../server/search/learn.ts';
import { sqliteLearnSource } from '../server/search/learn-source.ts';
import { DEFAULT_MODEL, MODEL_FORMAT, type LearnedModel } from '../server/search/ranker.ts';
import { modelFor } from '../server/search/models.ts';
import { SEARCH_MODEL_KIND } from '../server/search/model-job.ts';
import type { Services } from '../server/services.ts';
import type { Store } from '../server/store/index.ts';

function currentVersion(s: Services<Store>, libraryId: string): number {
  return s.store.libraries.currentVersion(libraryId, '')!.id;
}

test('learning is deterministic: the same documents give the same model', async () => {
  const s = await startTestServer({ config: { learnRanking: true } });
  try {
    await s.services.jobs.stop();
    await loadBundleFile(s.services.writer, bundlePath('pino'));
    const v = currentVersion(s.services, '/pinojs/pino');
    const a = await learnModel(sqliteLearnSource(s.services.store), s.services.embedder, v);
    const b = await learnModel(sqliteLearnSource(s.services.store), s.services.embedder, v);
    assert.deepEqual(a, b);
    // The job learns in a worker thread of its own, through its own connection: the same model.
    assert.deepEqual(await learnInWorker({ backend: 'sqlite', file: s.services.store.db.name }, s.services.embedder, v), a);
    assert.ok(a.report.questions >= 100, JSON.stringify(a.report));
    assert.equal(a.weights.length, DEFAULT_MODEL.weights.length);
    assert.ok(a.calibration.a > 0 && Number.isFinite(a.calibration.b));
  } finally {
    await s.close();
  }
});

test('a new version learns its model in a background job; searches use the default until the row is swapped in, then the learned one', async () => {
  const s = await startTestServer({ config: { learnRanking: true } });
  try {
    await loadBundleFile(s.services.writer, bundlePath('zod'));
    const v = currentVersion(s.services, '/colinhacks/zod');
    // Searches answer while the job runs (or before it starts) with whichever model is stored.
    const during = await s.api(`/api/v2/context?libraryId=/colinhacks/zod&query=${encodeURIComponent('discriminated union')}&type=json`, { auth: null });
    assert.equal(during.status, 200);
    await s.services.jobs.idle();
    const jobs = s.services.jobs.list({ kind: SEARCH_MODEL_KIND });
    assert.equal((await jobs).length, 1);
    assert.equal((await jobs)[0]!.state, 'succeeded');
    assert.equal(((await jobs)[0]!.payload as { versionId: number }).versionId, v);
    const row = s.services.store.models.get(v)!;
    assert.equal(row.format, MODEL_FORMAT);
    const stored = JSON.parse(row.model) as LearnedModel;
    assert.deepEqual(modelFor(s.services.store, v), { weights: stored.weights, calibration: stored.calibration, changePages: new Set(stored.changePages) });
    assert.ok(['learned', 'default'].includes(stored.source));
    assert.equal(stored.report.questions > 50, true);
    // Zod's "Release notes" page (/v4/) is a change page by its headings only: its address says nothing.
    assert.deepEqual(stored.changePages, ['https://zod.dev/v4/', 'https://zod.dev/v4/changelog']);
    const learned = await s.api(`/api/v3/search?library=/colinhacks/zod&query=${encodeURIComponent('discriminated union')}&type=txt`, { auth: null });
    assert.match(textSources(await learned.text())[0]!, /^https:\/\/zod\.dev\/api#discriminated-unions/);

    // A re-import is a new version: the old one leaves with its model, the new one learns its own.
    await loadBundleFile(s.services.writer, bundlePath('zod'));
    const v2 = currentVersion(s.services, '/colinhacks/zod');
    assert.notEqual(v2, v);
    assert.equal(s.services.store.models.get(v), null);
    await s.services.jobs.idle();
    assert.equal(s.services.store.models.get(v2)?.format, MODEL_FORMAT);
  } finally {
    await s.close();
  }
});

test('a model missing after a restart, or of an older format, is learned again at start-up', async () => {
  const dataDir = tempDir();
  const s = await startTestServer({ dataDir, config: { learnRanking: true } });
  let v = 0;
  try {
    await s.services.jobs.stop();
    await loadBundleFile(s.services.writer, bundlePath('pino'));
    v = currentVersion(s.services, '/pinojs/pino');
    // The process stops before the queued job ran (its queue takes no jobs here).
    assert.equal((await s.services.jobs.list({ kind: SEARCH_MODEL_KIND, state: 'queued' })).length, 1);
    assert.equal(modelFor(s.services.store, v), DEFAULT_MODEL);
  } finally {
    await s.close();
  }
  // Each start learns what is missing; `then` runs once the jobs are done.
  const restart = async (then: (services: Services<Store>) => Promise<void> | void) => {
    const again = await startTestServer({ dataDir, license: false, config: { learnRanking: true } });
    try {
      await again.services.jobs.idle();
      assert.equal(again.services.store.models.get(v)?.format, MODEL_FORMAT);
      await then(again.services);
    } finally {
      await again.close();
    }
  };
  await restart((services) => {
    // A stored model of another format is ignored and learned again at the next start.
    services.store.db.prepare('UPDATE search_models SET format = 0 WHERE version_id = ?').run(v);
    assert.equal(modelFor(services.store, v), DEFAULT_MODEL);
  });
  await restart(async (services) => assert.ok((await services.jobs.list({ kind: SEARCH_MODEL_KIND, state: 'succeeded' })).length >= 2));
});

test('the same data gives the same answers: two instances loaded alike answer byte for byte alike', async () => {
  const answers: string[][] = [];
  for (let i = 0; i < 2; i++) {
    const s = await startTestServer({ config: { learnRanking: true } });
    try {
      await loadBundleFile(s.services.writer, bundlePath('pino'));
      await s.services.jobs.idle();
      const out: string[] = [];
      for (const q of [
        'redact sensitive fields',
        'Will the last messages be lost if the process exits suddenly?',
        'Error: only one of option.transport or stream can be specified',
      ]) {
        for (const path of [
          `/api/v2/context?libraryId=/pinojs/pino&query=${encodeURIComponent(q)}`,
          `/api/v3/search?query=${encodeURIComponent(q)}&type=json`,
        ]) {
          out.push(await (await s.api(path, { auth: null })).text());
        }
      }
      answers.push(out);
    } finally {
      await s.close();
    }
  }
  assert.deepEqual(answers[0], answers[1]);
});
