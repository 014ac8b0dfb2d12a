import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startTestServer, waitFor } from './helpers/server.ts';
import { bundlePath, loadBundleFile } from './eval/bundles.ts';
import {
  bundleCodeSnippetSchema,
  bundleHeaderSchema,
  bundleInfoSnippetSchema,
  bundleMeta,
  codeSnippetInput,
  infoSnippetInput,
} from '../server/ingest/bundle.ts';
import type { SnippetInput } from '../lib/model.ts';
import type { ContextResponse } from '../server/search/answer-types.ts';
import type { StoreContextService } from '../server/search/context-service.ts';

const MARK = '[gen2] ';

/** The fastify bundle again, every description and content marked, as a second generation of the docs. */
function secondGeneration(): { meta: ReturnType<typeof bundleMeta>; inputs: SnippetInput[] } {
  const lib = (JSON.parse(fs.readFileSync(bundlePath('fastify'), 'utf8')) as { libraries: Record<string, unknown>[] }).libraries[0]!;
  const { codeSnippets, infoSnippets, ...rest } = lib as { codeSnippets: unknown[]; infoSnippets: unknown[] };
  const meta = bundleMeta(bundleHeaderSchema.parse(rest), '/fastify/fastify');
  const inputs: SnippetInput[] = [
    ...codeSnippets.map((s) => {
      const c = bundleCodeSnippetSchema.parse(s);
      return codeSnippetInput({ ...c, description: MARK + c.description });
    }),
    ...infoSnippets.map((s) => {
      const i = bundleInfoSnippetSchema.parse(s);
      return infoSnippetInput({ ...i, content: MARK + i.content });
    }),
  ];
  return { meta, inputs };
}

function generationOf(json: ContextResponse): 'old' | 'new' | 'mixed' {
  const marks = [...json.codeSnippets.map((c) => c.codeDescription.startsWith(MARK)), ...json.infoSnippets.map((i) => i.content.startsWith(MARK))];
  if (marks.every(Boolean)) return 'new';
  if (marks.every((m) => !m)) return 'old';
  return 'mixed';
}

for (const workers of [0, 2]) {
  test(`answers during a forced re-import come wholly from the old or wholly from the new version (${workers ? `${workers} retrieval worker threads` : 'request thread'})`, async () => {
    const s = await startTestServer({ config: { searchWorkers: workers } });
    try {
      await loadBundleFile(s.services.writer, bundlePath('fastify'));
      const { meta, inputs } = secondGeneration();
      const questions = [
        'How do I register a plugin?',
        'setErrorHandler',
        'validation schema for the body',
        'onRequest hook',
        'logging with pino',
        'reply.send a stream',
      ];
      const seen: ('old' | 'new' | 'mixed')[] = [];
      let rebuilding = true;
      let afterSwap = 0;

      const client = async (n: number) => {
        for (let i = 0; rebuilding || afterSwap < 20; i++) {
          const q = questions[(n + i) % questions.length]!;
          const fast = i % 2 === 0 ? 'true' : 'false';
          const res = await s.api(`/api/v2/context?${new URLSearchParams({ libraryId: '/fastify/fastify', query: q, type: 'json', fast })}`, { auth: null });
          assert.equal(res.status, 200);
          const json = (await res.json()) as ContextResponse;
          assert.ok(json.codeSnippets.length + json.infoSnippets.length > 0, `an answer for "${q}"`);
          seen.push(generationOf(json));
          if (!rebuilding) afterSwap++;
        }
      };

      const rebuild = async () => {
        // Clients are answering first (cold retrieval workers can take longer than the whole rebuild).
        await waitFor(() => (seen.length >= 4 ? true : null), 30_000, 5);
        // A forced rebuild of the same (library, tag) through the writer, in small batches with
        // pauses so that many requests are answered while the new version is half written.
        const build = await s.services.writer.begin(meta, { tag: '' });
        for (let i = 0; i < inputs.length; i += 60) {
          await build.add(inputs.slice(i, i + 60));
          await new Promise((r) => setTimeout(r, 3));
        }
        await build.commit();
        rebuilding = false;
      };

      await Promise.all([rebuild(), client(0), client(1), client(2), client(3)]);
      assert.equal(seen.filter((g) => g === 'mixed').length, 0, 'no answer mixes the two versions');
      assert.ok(seen.includes('old'), 'answers were served from the old version while the new one was written');
      assert.ok(seen.includes('new'), 'answers come from the new version after the swap');
      assert.equal(s.services.store.libraries.versions('/fastify/fastify').length, 1, 'the old version is purged');
      if (workers) {
        // The answers really came from the workers, and equal the request thread's.
        const service = s.services.context as StoreContextService;
        const viaWorker = await service.query({ libraryId: '/fastify/fastify', query: 'onRequest hook', fast: false, researchMode: false }, null);
        await service.close();
        const inThread = await service.query({ libraryId: '/fastify/fastify', query: 'onRequest hook', fast: false, researchMode: false }, null);
        assert.deepEqual(viaWorker.json, inThread.json);
        assert.equal(viaWorker.text, inThread.text);
      }
    } finally {
      await (s.services.context as StoreContextService).close();
      await s.close();
    }
  });
}
