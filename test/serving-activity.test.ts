import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServingActivity, waitForQuiet } from '../server/system/serving-activity.ts';
import path from 'node:path';
import { ROOT, startTestServer } from './helpers/server.ts';
import { ModelEmbedder } from '../server/embed/model.ts';

test('waitForQuiet returns at once when nothing is in flight, and after at most its limit otherwise', () => {
  const a = new ServingActivity();
  let t = performance.now();
  waitForQuiet(a.buffer, 1000);
  assert.ok(performance.now() - t < 50);
  a.begin();
  t = performance.now();
  waitForQuiet(a.buffer, 60);
  const waited = performance.now() - t;
  assert.ok(waited >= 55 && waited < 1000, `${waited} ms`);
  a.end();
  assert.equal(a.inFlight, 0);
});

test('every request is counted while in flight and no longer after, whether it ends or its client goes; event streams are not', async () => {
  const s = await startTestServer();
  try {
    await (await s.api('/api/v3/search?query=x')).arrayBuffer();
    await (await s.api('/api/nothing-here')).arrayBuffer();
    // A client that gives up mid-request.
    const aborted = new AbortController();
    const pending = s.api('/api/v3/search?query=validate%20a%20request%20body', { signal: aborted.signal }).catch(() => null);
    aborted.abort();
    await pending;
    // A request held open is in flight until its client goes (the events route, asked without
    // saying it wants a stream)...
    const held = new AbortController();
    const open = s.api('/api/jobs/events', { signal: held.signal }).catch(() => null);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(s.services.activity.inFlight, 1);
    held.abort();
    await open;
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(s.services.activity.inFlight, 0);
    // ...and the jobs page's event stream stays open without counting.
    const events = new AbortController();
    const stream = s.api('/api/jobs/events', { headers: { accept: 'text/event-stream' }, signal: events.signal }).catch(() => null);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(s.services.activity.inFlight, 0, 'an open event stream is not in flight');
    events.abort();
    await stream;
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(s.services.activity.inFlight, 0);
  } finally {
    await s.close();
  }
});

test("the model's background lane embeds a text only in a quiet moment (at most 50 ms later); questions never wait", async () => {
  const activity = new ServingActivity();
  const model = await ModelEmbedder.load([path.join(ROOT, 'data')], { activity: activity.buffer });
  try {
    const texts = ['how to validate a body', 'child loggers', 'register a plugin', 'stream a file'];
    // On the query lane: the background lane keeps what it embedded, and would answer these again without waiting.
    const quiet = await model.embed(texts, 'query');
    activity.begin();
    let t = performance.now();
    const busy = await model.embed(texts, 'background');
    const waited = performance.now() - t;
    assert.ok(waited >= 4 * 45, `each of 4 texts waited for quiet: ${waited.toFixed(0)} ms`);
    assert.deepEqual(busy, quiet, 'the same vectors');
    // The fastest of three: a loaded machine can delay one answer past 45 ms, a lane that waited for quiet delays all three.
    let fastest = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 3 && fastest >= 45; i++) {
      t = performance.now();
      await model.embed([`a question ${i}`], 'query');
      fastest = Math.min(fastest, performance.now() - t);
    }
    assert.ok(fastest < 45, `the query lane does not wait: ${fastest.toFixed(0)} ms`);
    activity.end();
  } finally {
    await model.close();
  }
});
