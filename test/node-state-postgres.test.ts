// Two nodes on one PostgreSQL (two PgStores, each with its own data dir): what a job or a request
// needs is not on the disk of the node that took the request. A bundle staged through A is imported
// by a job B runs; a document upload likewise; the cookie secret is one; a license installed through
// A is seen by B; a node given STACKS_LICENSE_FILE reads its file; a backup holds every pending job's
// input and a restore into PostgreSQL shares them again, as `stacks store copy --to` does. And the way back: on SQLite the license and
// the secret a database brought from PostgreSQL go to their files.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { operatorSubmitter } from '../lib/owner.ts';
import { sharedSessionSecret } from '../server/auth/sessions.ts';
import { loadConfig, type Config } from '../server/config.ts';
import { postgresDatabases, restoreArchiveToPostgres } from '../server/backup/postgres.ts';
import { BackupService } from '../server/backup/service.ts';
import { registerImportJob } from '../server/ingest/import-job.ts';
import { ImportService } from '../server/ingest/import-service.ts';
import { SharedStagedFiles } from '../server/ingest/staged-files.ts';
import { LibraryWriter } from '../server/ingest/writer.ts';
import { JobQueue } from '../server/jobs/queue.ts';
import { SharedLicense } from '../server/license/license-shared.ts';
import { LicenseService, loadVerifyKeys } from '../server/license/license.ts';
import { createLogger } from '../server/log.ts';
import { SourceService } from '../server/sources/service.ts';
import { PgStore } from '../server/store/pg/index.ts';
import { Store } from '../server/store/index.ts';
import { pgQuery } from '../server/store/pg/transaction.ts';
import { nodeState } from '../server/system/node-state.ts';
import { copyStoreToPostgres } from '../server/system/store-copy.ts';
import { writeBundle } from './helpers/bundles.ts';
import { FIXTURES } from './helpers/fixtures.ts';
import { startPostgres, type TestPostgres } from './helpers/postgres.ts';
import { devLicense, ROOT, tempDir, waitFor } from './helpers/server.ts';

const log = createLogger('silent');
/** Small chunks, so that a small file is several rows. */
const CHUNK = 16 * 1024;

interface Node {
  store: PgStore;
  config: Config;
  jobs: JobQueue;
  staged: SharedStagedFiles;
}

function node(store: PgStore): Node {
  const config = loadConfig({ dataDir: tempDir('stacks-node-') }, {});
  return { store, config, jobs: new JobQueue(store, log, 1), staged: new SharedStagedFiles(config.dataDir, store.staged, CHUNK) };
}

const stagedRows = async (store: PgStore) =>
  (await pgQuery<{ name: string }>(store.pool, 'SELECT name FROM staged_files ORDER BY name')).rows.map((r) => r.name);
const filesUnder = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()) : []);
const ended = (n: Node, id: number) =>
  waitFor(async () => {
    const job = await n.store.jobs.get(id);
    return job && ['succeeded', 'failed', 'cancelled'].includes(job.state) ? job : null;
  });

let server: TestPostgres;
let a: Node;
let b: Node;
let teamspaceId: number;
let url: string;

async function abandonedSwept(): Promise<void> {
  const importerA = new ImportService(a.config, a.store, a.jobs, log, a.staged);
  const importerB = new ImportService(b.config, b.store, b.jobs, log, b.staged);
  fs.mkdirSync(importerA.stagedDir, { recursive: true });
  const abandoned = path.join(importerA.stagedDir, 'abandoned.ndjson');
  fs.writeFileSync(abandoned, 'c{}\n');
  await a.staged.share([abandoned]);
  // A queued import job (no queue runs yet) keeps its file.
  const held = 'uploads/staged/held.ndjson';
  fs.writeFileSync(path.join(a.config.dataDir, held), 'c{}\n');
  await a.staged.share([held]);
  const heldJob = await a.store.jobs.insert('import', { file: held }, '/held/lib', null, new Date().toISOString());
  assert.equal(await importerB.sweep(Date.now()), 0, 'young files are kept');
  await importerB.sweep(Date.now() + 2 * 3600_000);
  assert.deepEqual(await stagedRows(a.store), [held]);
  assert.equal(await b.staged.obtain('uploads/staged/abandoned.ndjson'), null, 'gone from the database, and never on B');
  const fetched = await b.staged.obtain(held);
  assert.equal(fetched, path.join(b.config.dataDir, held));
  assert.equal(fs.readFileSync(String(fetched), 'utf8'), 'c{}\n');
  // Cancelled while queued: the next sweep takes its file.
  await a.jobs.cancel(heldJob);
  assert.equal(await importerA.sweep(Date.now() + 2 * 3600_000), 3, "A's two files, and the shared copy of the cancelled job's");
  assert.deepEqual(await stagedRows(a.store), []);
  assert.equal(await importerB.sweep(Date.now() + 2 * 3600_000), 1, "B's fetched copy");
}

async function bundleThroughA(): Promise<void> {
  const importerA = new ImportService(a.config, a.store, a.jobs, log, a.staged);
  const importerB = new ImportService(b.config, b.store, b.jobs, log, b.staged);
  const bundle = path.join(tempDir(), 'bundle.json');
  await writeBundle(bundle, [{ project: '/shared/lib', snippets: 300, seed: 3 }]);
  // A takes the upload and never runs a job.
  const queued = await importerA.importFile(bundle);
  assert.equal(queued.jobs.length, 1);
  const [name] = await stagedRows(a.store);
  assert.match(String(name), /^uploads\/staged\/.+\.ndjson$/);
  const onA = path.join(a.config.dataDir, String(name));
  const rows = await pgQuery<{ size: number; chunks: number }>(a.store.pool, 'SELECT size, chunks FROM staged_files');
  assert.equal(rows.rows[0]!.size, fs.statSync(onA).size);
  assert.ok(rows.rows[0]!.chunks > 5, 'stored in several chunks');

  registerImportJob(b.jobs, { importer: importerB, writer: new LibraryWriter(b.store, null), store: b.store });
  b.jobs.start();
  const job = await ended(b, queued.jobs[0]!.jobId);
  assert.equal(job?.state, 'succeeded', job?.error ?? '');
  assert.equal((await b.store.libraries.currentVersion('/shared/lib', ''))?.totalSnippets, 300);
  // The job ended: its shared copy and B's fetched copy are gone; A's own file waits for A's sweep.
  assert.deepEqual(await stagedRows(a.store), []);
  assert.deepEqual(filesUnder(importerB.stagedDir), []);
  assert.ok(fs.existsSync(onA));
  assert.equal(await importerA.sweep(Date.now() + 2 * 3600_000), 1);
  assert.ok(!fs.existsSync(onA));
}

async function uploadThroughA(): Promise<void> {
  const writerA = new LibraryWriter(a.store, null);
  const sourcesA = new SourceService({ config: a.config, store: a.store, jobs: a.jobs, writer: writerA, log, staged: a.staged });
  const sourcesB = new SourceService({ config: b.config, store: b.store, jobs: b.jobs, writer: new LibraryWriter(b.store, null), log, staged: b.staged });
  await sourcesB.register(b.jobs);
  // As the upload route does: multer streams the parts into a fresh staging folder of A.
  const dir = sourcesA.newStagingDir();
  const upload = path.join(dir, 'upload-0.bin');
  fs.copyFileSync(path.join(FIXTURES, 'documents/got-hooks.docx'), upload);
  const submitted = await sourcesA.submitFiles(
    { stagedDir: dir, files: [{ path: upload, originalName: 'got-hooks.docx', size: fs.statSync(upload).size }], collectionName: 'Shared docs', force: false },
    operatorSubmitter(teamspaceId),
  );
  const job = await ended(b, submitted.jobId);
  assert.equal(job?.state, 'succeeded', job?.error ?? '');
  const version = await b.store.libraries.currentVersion(submitted.libraryName, '');
  assert.ok(version && version.totalSnippets > 0);
  assert.deepEqual(await stagedRows(a.store), []);
  assert.deepEqual(filesUnder(sourcesB.stagingRoot), [], "B's fetched copy is gone");
}

async function backupHoldsOtherNodesInputs(): Promise<void> {
  // A pending job (of a kind no queue here runs) whose input A staged.
  const name = 'uploads/staged/pending.ndjson';
  fs.mkdirSync(path.join(a.config.dataDir, 'uploads/staged'), { recursive: true });
  fs.writeFileSync(path.join(a.config.dataDir, name), 'c{"pending":true}\n');
  await a.staged.share([name]);
  await a.store.jobs.insert('held-for-backup', { file: name }, null, null, new Date().toISOString());
  // B backs up: the archive holds the input though B never took it.
  const backups = new BackupService({ snapshot: postgresDatabases(url), dataDir: b.config.dataDir, backupDir: tempDir(), keep: 1, log, staged: b.staged });
  const archive = await backups.create('cli');
  assert.equal(archive.activeJobs, 1);
  // Restored into another database through a third data dir: the input is on that node and in the database, for any node.
  const restoredUrl = await server.createDatabase('restored');
  const dataDir = tempDir('stacks-node-');
  await restoreArchiveToPostgres(archive.file, dataDir, restoredUrl);
  assert.equal(fs.readFileSync(path.join(dataDir, name), 'utf8'), 'c{"pending":true}\n');
  const restored = await PgStore.open(restoredUrl, { poolSize: 1 });
  try {
    assert.deepEqual(await stagedRows(restored), [name]);
    const elsewhere = tempDir('stacks-node-');
    assert.equal(fs.readFileSync(String(await new SharedStagedFiles(elsewhere, restored.staged).obtain(name)), 'utf8'), 'c{"pending":true}\n');
  } finally {
    await restored.close();
  }
}

async function copiedWithInputs(): Promise<void> {
  // A SQLite data dir with an import waiting for its turn.
  const dataDir = tempDir('stacks-node-');
  const name = 'uploads/staged/waiting.ndjson';
  const sqlite = Store.open(dataDir);
  try {
    fs.mkdirSync(path.join(dataDir, 'uploads/staged'), { recursive: true });
    fs.writeFileSync(path.join(dataDir, name), 'c{"waiting":true}\n');
    await sqlite.jobs.insert('import', { file: name }, '/waiting/lib', null, new Date().toISOString());
  } finally {
    sqlite.close();
  }
  const copiedUrl = await server.createDatabase('copied');
  await copyStoreToPostgres(dataDir, copiedUrl);
  const copied = await PgStore.open(copiedUrl, { poolSize: 1 });
  try {
    assert.equal((await copied.jobs.list({ state: 'queued' })).length, 1);
    const elsewhere = tempDir('stacks-node-');
    assert.equal(fs.readFileSync(String(await new SharedStagedFiles(elsewhere, copied.staged).obtain(name)), 'utf8'), 'c{"waiting":true}\n');
  } finally {
    await copied.close();
  }
}

async function oneCookieSecret(): Promise<void> {
  // Both data dirs carry a secret of their own (moved from SQLite): the cluster keeps one of them, the same for both.
  const own = { a: 'a'.repeat(43), b: 'b'.repeat(43) };
  fs.writeFileSync(path.join(a.config.dataDir, 'session.secret'), own.a);
  fs.writeFileSync(path.join(b.config.dataDir, 'session.secret'), own.b);
  const [fromA, fromB] = await Promise.all([sharedSessionSecret(a.store.settings, a.config.dataDir), sharedSessionSecret(b.store.settings, b.config.dataDir)]);
  assert.equal(fromA, fromB);
  assert.ok([own.a, own.b].includes(fromA));
  // A node without one, started later, gets the cluster's.
  const fresh = tempDir('stacks-node-');
  assert.equal(await sharedSessionSecret(b.store.settings, fresh), fromA);
  assert.equal((await nodeState({ ...b.config, dataDir: fresh }, b.store)).cookieSecret, fromA);
  assert.ok(!fs.existsSync(path.join(fresh, 'session.secret')), 'nothing written to the node');
}

async function licenseEverywhere(): Promise<void> {
  const keys = loadVerifyKeys(path.join(ROOT, 'licenses'));
  const licensee = (l: LicenseService) => l.status().license?.licensee ?? l.status().state;
  const licenseA = new LicenseService(keys, (await nodeState(a.config, a.store)).licenseHolder, true);
  // B as nodeState makes it, but reading the database every 50 ms.
  const licenseB = new LicenseService(keys, await SharedLicense.open(b.store.settings, { refreshMs: 50 }), true);
  assert.equal(licensee(licenseB), 'missing');
  // C starts with a license.json in its data dir (an instance moved from SQLite): it is the cluster's now.
  const c = loadConfig({ dataDir: tempDir('stacks-node-') }, {});
  fs.writeFileSync(path.join(c.dataDir, 'license.json'), devLicense({ licensee: 'Moved' }));
  assert.equal(licensee(new LicenseService(keys, (await nodeState(c, a.store)).licenseHolder, true)), 'Moved');
  // Once the database has one, a node's own license.json changes nothing.
  fs.writeFileSync(path.join(b.config.dataDir, 'license.json'), devLicense({ licensee: 'Elsewhere' }));
  assert.equal(licensee(new LicenseService(keys, (await nodeState(b.config, b.store)).licenseHolder, true)), 'Moved');
  const stop = licenseB.watch((err) => assert.fail(String(err)));
  try {
    await waitFor(() => licensee(licenseB) === 'Moved', 10_000, 20);
    assert.equal((await licenseA.install(devLicense({ licensee: 'Installed' }))).state, 'valid');
    assert.equal(licensee(licenseA), 'Installed');
    await waitFor(() => licensee(licenseB) === 'Installed', 10_000, 20);
  } finally {
    stop();
  }
  // STACKS_LICENSE_FILE wins over the database's license on the node that sets it.
  const file = path.join(tempDir(), 'node.license.json');
  const own = new LicenseService(keys, (await nodeState({ ...b.config, licenseFile: file }, b.store)).licenseHolder, true);
  assert.equal(licensee(own), 'missing');
  assert.match(own.status().message, /node\.license\.json/);
}

/** A SQLite data dir whose database came from PostgreSQL (store copy --from, a restore): license and secret back to their files. */
async function movedBackToSqlite(): Promise<void> {
  const config = loadConfig({ dataDir: tempDir('stacks-node-') }, {});
  const store = Store.open(config.dataDir);
  try {
    await store.settings.set('license', devLicense({ licensee: 'Came back' }), new Date().toISOString());
    await store.settings.set('session.secret', 's'.repeat(43), new Date().toISOString());
    const state = await nodeState(config, store);
    const keys = loadVerifyKeys(path.join(ROOT, 'licenses'));
    assert.equal(new LicenseService(keys, state.licenseHolder, true).status().license?.licensee, 'Came back');
    assert.equal(state.cookieSecret, 's'.repeat(43));
    assert.ok(fs.existsSync(path.join(config.dataDir, 'license.json')));
    assert.deepEqual([await store.settings.get('license'), await store.settings.get('session.secret')], [null, null]);
  } finally {
    store.close();
  }
}

test('on SQLite, a license and cookie secret the database brought from PostgreSQL go to their files', movedBackToSqlite);

describe('two nodes on one PostgreSQL', () => {
  before(async () => {
    server = await startPostgres('debian');
    url = await server.createDatabase('shared');
    a = node(await PgStore.open(url, { poolSize: 3 }));
    b = node(await PgStore.open(url, { poolSize: 3 }));
    teamspaceId = await a.store.accounts.createTeamspace('default', 'enterprise', new Date().toISOString());
  });
  after(async () => {
    await Promise.all([a?.jobs.stop(), b?.jobs.stop()]);
    await Promise.all([a?.store.close(), b?.store.close()]);
    await server?.close();
  });
  test('abandoned shared files are swept by any node; those of queued jobs and young ones are kept', abandonedSwept);
  test('a bundle staged through A is imported by a job B runs; the shared copy goes when the job ends', bundleThroughA);
  test('a document upload staged through A is indexed by a job B runs', uploadThroughA);
  test('a backup through B holds an input A staged; restored into another database, the input is there for every node', backupHoldsOtherNodesInputs);
  test("stacks store copy --to takes the pending jobs' staged inputs along, for any node", copiedWithInputs);
  test('the cookie secret is one for the cluster, whichever node makes it first', oneCookieSecret);
  test("a license installed through A is seen by B; a data dir's license.json is adopted once; a node given a license file reads that file", licenseEverywhere);
});
