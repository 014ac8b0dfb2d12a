import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig, ConfigError, databasePoolSizeOf, requestThreadVectorCacheBytes, searchWorkerCount, workerVectorCacheBytes } from '../server/config.ts';
import { runStacks, tempDir } from './helpers/server.ts';

test('config: env and flags, flags win; invalid or unknown values are named', () => {
  const c = loadConfig({ port: '4000' }, { PORT: '5000', DATA_DIR: '/tmp/x', STACKS_DEV: '1', LOG_LEVEL: 'debug' });
  assert.equal(c.port, 4000);
  assert.equal(c.dataDir, '/tmp/x');
  assert.equal(c.dev, true);
  assert.equal(c.logLevel, 'debug');
  assert.throws(
    () => loadConfig({}, { PORT: 'eighty' }),
    (e: Error) => e instanceof ConfigError && /PORT/.test(e.message),
  );
  assert.throws(
    () => loadConfig({}, { STACKS_PROT: '1' }),
    (e: Error) => e instanceof ConfigError && /STACKS_PROT/.test(e.message),
  );
  assert.throws(
    () => loadConfig({ logLevel: 'loud' }, {}),
    (e: Error) => /--log-level/.test(e.message),
  );
  assert.equal(loadConfig({}, {}).trustProxy, 'loopback');
  assert.equal(loadConfig({}, { STACKS_TRUST_PROXY: '10.0.0.0/8, loopback' }).trustProxy, '10.0.0.0/8, loopback');
  assert.throws(
    () => loadConfig({}, { STACKS_TRUST_PROXY: 'my-proxy' }),
    (e: Error) => /STACKS_TRUST_PROXY/.test(e.message),
  );
});

test("config: a node's PostgreSQL pool is 4 connections per core, at most 16, unless set", () => {
  assert.equal(databasePoolSizeOf(loadConfig({}, {}), 2), 8);
  assert.equal(databasePoolSizeOf(loadConfig({}, {}), 1), 4);
  assert.equal(databasePoolSizeOf(loadConfig({}, {}), 64), 16);
  assert.equal(databasePoolSizeOf(loadConfig({}, { STACKS_DATABASE_POOL_SIZE: '40' }), 2), 40);
  assert.throws(
    () => loadConfig({}, { STACKS_DATABASE_POOL_SIZE: '1' }),
    (e: Error) => /STACKS_DATABASE_POOL_SIZE/.test(e.message),
  );
});

test('config: search workers and the vector cache each searching thread gets', () => {
  const MB = 1024 * 1024;
  assert.equal(searchWorkerCount(loadConfig({}, {})), 2);
  assert.equal(searchWorkerCount(loadConfig({}, { STACKS_DEV: '1' })), 0);
  assert.equal(searchWorkerCount(loadConfig({}, { STACKS_DEV: '1', STACKS_SEARCH_WORKERS: '3' })), 3);
  assert.equal(loadConfig({}, {}).vectorCacheMb, 200);
  assert.equal(workerVectorCacheBytes(loadConfig({}, {})), 200 * MB);
  // With workers the request thread keeps a few versions for the model learning; without, it searches and gets it all.
  assert.equal(requestThreadVectorCacheBytes(loadConfig({}, {})), 32 * MB);
  assert.equal(requestThreadVectorCacheBytes(loadConfig({}, { STACKS_SEARCH_WORKERS: '0' })), 200 * MB);
  assert.equal(requestThreadVectorCacheBytes(loadConfig({}, { STACKS_VECTOR_CACHE_MB: '8' })), 8 * MB);
  assert.equal(requestThreadVectorCacheBytes(loadConfig({}, { STACKS_VECTOR_CACHE_MB: '0' })), 0);
  assert.throws(
    () => loadConfig({}, { STACKS_VECTOR_CACHE_MB: '-1' }),
    (e: Error) => /STACKS_VECTOR_CACHE_MB/.test(e.message),
  );
});

test('serve refuses to start with an invalid setting and names it', async () => {
  const r = await runStacks(['serve', '--data-dir', tempDir()], { PORT: '99999' });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /PORT/);
});
