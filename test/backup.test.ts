import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { runStacks, startTestServer, tempDir, waitFor, type TestServer } from './helpers/server.ts';
import { CORPUS_BUNDLES } from './helpers/fixtures.ts';
import { runCli } from './helpers/cli.ts';
import { writeBundle } from './helpers/bundles.ts';
import * as tar from 'tar';
import { openSqlite } from '../lib/sqlite.ts';
import { SCHEMA_VERSION, schemaVersionOfFile } from '../server/store/backup.ts';

const QUESTIONS = [
  { library: '/acme/big', query: 'retry timeout handler' },
  { library: '/acme/big', query: 'serialize the session cookie header' },
  { library: '/pinojs/pino', query: 'How do I redact sensitive fields?' },
  { library: '/pinojs/pino', query: 'child logger bindings' },
];

async function importFile(s: TestServer, file: string, force = false): Promise<number[]> {
  const r = await s.api(`/api/import-libraries${force ? '?force=true' : ''}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: fs.createReadStream(file) as never,
    duplex: 'half',
  } as RequestInit);
  const body = (await r.json()) as { jobs: { jobId: number }[] };
  assert.equal(r.status, 200, JSON.stringify(body));
  return body.jobs.map((j) => j.jobId);
}

/** The top snippets of each question's search answer (anonymous: the libraries are instance-wide). */
async function answers(s: TestServer): Promise<string[][]> {
  const out: string[][] = [];
  for (const q of QUESTIONS) {
    const r = await s.api(`/api/v3/search?library=${encodeURIComponent(q.library)}&query=${encodeURIComponent(q.query)}&type=json`, { auth: null });
    assert.equal(r.status, 200);
    const body = (await r.json()) as { codeSnippets: { codeId: string; codeTitle: string }[]; infoSnippets: { pageId?: string; content: string }[] };
    out.push(
      [...body.codeSnippets.map((c) => `${c.codeId} ${c.codeTitle}`), ...body.infoSnippets.map((i) => `${i.pageId} ${i.content.slice(0, 40)}`)].slice(0, 10),
    );
  }
  return out;
}

/** What the restored database serves for a library: its current version's recorded total and the rows it really has, and any unfinished build. */
function servedIn(dataDir: string, libraryId: string): { total: number; rows: number; building: number } {
  const db = openSqlite(path.join(dataDir, 'stacks.db'), { readonly: true });
  try {
    const v = db
      .prepare("SELECT id, total_snippets AS total FROM library_versions WHERE library_id = ? AND tag = '' AND is_current = 1 AND state = 'ready'")
      .get(libraryId) as { id: number; total: number };
    const rows = (db.prepare('SELECT count(*) AS n FROM snippets WHERE version_id = ?').get(v.id) as { n: number }).n;
    const building = (db.prepare("SELECT count(*) AS n FROM library_versions WHERE library_id = ? AND state = 'building'").get(libraryId) as { n: number }).n;
    return { total: v.total, rows, building };
  } finally {
    db.close();
  }
}

test('a backup taken during a running import restores to a consistent state; the interrupted import reruns and the answers match', async () => {
  const work = tempDir('stacks-backup-');
  const a = await startTestServer();
  let b: TestServer | null = null;
  try {
    await writeBundle(path.join(work, 'v1.json'), [{ project: '/acme/big', snippets: 2000, marker: 'alpha', seed: 1 }]);
    await importFile(a, path.join(work, 'v1.json'));
    await importFile(a, path.join(CORPUS_BUNDLES, 'pino.json'));
    await a.services.jobs.idle();

    // A forced re-import large enough to be running while the backup is taken: the backup starts once
    // 2,000 of its 10,000 snippets are stored, and `activeJobs` below fails the test if it ended first
    // (it passed with eight copies of this file running at once on 2 cores; 40,000 took 110 s in the suite).
    await writeBundle(path.join(work, 'v2.json'), [{ project: '/acme/big', snippets: 10_000, marker: 'beta', seed: 2 }]);
    const [jobId] = await importFile(a, path.join(work, 'v2.json'), true);
    await waitFor(
      async () => {
        const job = a.services.jobs.get(jobId!);
        return (await job).state === 'running' && Number((await job).progress.stored ?? 0) >= 2000;
      },
      60_000,
      20,
    );
    const backup = await a.api('/api/backup', { method: 'POST' });
    const made = (await backup.json()) as { file: string; activeJobs: number; libraries: number; snippets: number };
    assert.equal(backup.status, 200, JSON.stringify(made));
    // The snapshot is taken first (the archive is written after it, while the import goes on).
    assert.equal(made.activeJobs, 1, 'the snapshot was taken while the import was running');
    assert.equal(made.libraries, 2);
    assert.ok(fs.statSync(made.file).size > 0 && path.dirname(made.file) === path.join(a.dataDir, 'backups'));
    const listed = (await (await a.api('/api/backups')).json()) as { backups: { name: string }[] };
    assert.deepEqual(
      listed.backups.map((x) => x.name),
      [path.basename(made.file)],
    );
    const download = await a.api(`/api/backups/${path.basename(made.file)}`);
    assert.equal(download.status, 200);
    assert.deepEqual(Buffer.from(await download.arrayBuffer()), fs.readFileSync(made.file), 'the download is the archive');

    assert.ok(
      (await a.services.audit.list({ limit: 100, action: 'backupCreate' })).entries.some((e) => e.outcome === 'ok' && e.actor.kind === 'key'),
      'the backup is in the audit log',
    );
    await a.services.jobs.idle();
    assert.equal((await a.services.jobs.get(jobId!)).state, 'succeeded');
    const expected = await answers(a);
    await a.close();

    // Restored into a new data dir: the previous version whole, the new one not half there.
    const restored = tempDir('stacks-restored-');
    const r = await runCli(['restore', made.file, '--data-dir', restored, '--yes', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).libraries, 2);
    assert.deepEqual(servedIn(restored, '/acme/big'), { total: 2000, rows: 2000, building: 1 });

    // Started, the interrupted import reruns from its staged bundle (carried in the archive) and swaps in whole.
    b = await startTestServer({ dataDir: restored, license: false });
    await b.services.jobs.idle();
    assert.equal((await b.services.jobs.get(jobId!)).state, 'succeeded');
    assert.deepEqual(servedIn(restored, '/acme/big'), { total: 10_000, rows: 10_000, building: 0 });
    assert.deepEqual(await answers(b), expected, 'the restored instance answers as the original did after its import');
    assert.ok(
      (await b.services.audit.list({ limit: 100, action: 'backupRestore' })).entries.some((e) => e.outcome === 'ok' && e.actor.kind === 'operator'),
      'the restore is in the restored audit log',
    );
  } finally {
    await a.close();
    await b?.close();
  }
});

/** Unpacks an archive, lets `change` edit its files, and packs it again with the manifest's checksums (and schema) brought up to date. */
async function rewriteArchive(
  archive: string,
  out: string,
  change: (dir: string) => void,
  manifestChange: (m: Record<string, unknown>) => void = () => {},
): Promise<void> {
  const dir = tempDir('stacks-archive-');
  await tar.extract({ file: archive, cwd: dir });
  change(dir);
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as {
    files: { path: string; bytes: number; sha256: string }[];
  } & Record<string, unknown>;
  for (const f of manifest.files) {
    const file = path.join(dir, f.path);
    f.bytes = fs.statSync(file).size;
    f.sha256 = crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  }
  manifestChange(manifest);
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest));
  await tar.create({ gzip: true, file: out, cwd: dir }, ['manifest.json', ...manifest.files.map((f) => f.path)]);
}

function editDb(dir: string, sql: string): void {
  const db = openSqlite(path.join(dir, 'stacks.db'));
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

test('restore: refused for a newer schema, a damaged archive or a running server; an older archive is migrated; the current data is moved aside, never deleted', async () => {
  const s = await startTestServer();
  const work = tempDir('stacks-restore-');
  try {
    fs.writeFileSync(path.join(s.dataDir, 'sources.yaml'), 'sources: []\n');
    const made = (await (await s.api('/api/backup', { method: 'POST' })).json()) as { file: string; schemaVersion: number };
    assert.equal(made.schemaVersion, SCHEMA_VERSION);

    // A real process: the server it must find serving is this one.
    const running = await runStacks(['restore', made.file, '--data-dir', s.dataDir, '--yes']);
    assert.equal(running.code, 2);
    assert.match(running.stderr, /A Stacks server \(pid \d+\) is serving .*: stop it before restoring/);

    const target = tempDir('stacks-target-');
    fs.writeFileSync(path.join(target, 'stacks.db'), 'the current data');
    const before = fs.readdirSync(target);

    const newer = path.join(work, 'newer.tar.gz');
    await rewriteArchive(made.file, newer, (dir) =>
      editDb(dir, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (${SCHEMA_VERSION + 1}, 'from-the-future', '2030-01-01')`),
    );
    const refused = await runCli(['restore', newer, '--data-dir', target, '--yes']);
    assert.equal(refused.code, 2);
    assert.match(
      refused.stderr,
      new RegExp(
        `was taken by a newer Stacks \\(.*database schema ${SCHEMA_VERSION + 1}; this one knows up to ${SCHEMA_VERSION}\\): upgrade Stacks, then restore`,
      ),
    );
    assert.deepEqual(fs.readdirSync(target), before, 'nothing changed');

    const damaged = path.join(work, 'damaged.tar.gz');
    await rewriteArchive(
      made.file,
      damaged,
      () => {},
      (m) => ((m.files as { sha256: string }[])[0]!.sha256 = '0'.repeat(64)),
    );
    const bad = await runCli(['restore', damaged, '--data-dir', target, '--yes']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /is damaged: the checksum of stacks\.db does not match its manifest/);
    assert.deepEqual(fs.readdirSync(target), before, 'nothing changed');

    // An archive of the schema before the last migration (023, the scheduled runs taken):
    // restored, then migrated when opened.
    const older = path.join(work, 'older.tar.gz');
    await rewriteArchive(
      made.file,
      older,
      (dir) => editDb(dir, `DROP TABLE schedule_runs; DELETE FROM schema_migrations WHERE version = ${SCHEMA_VERSION}`),
      (m) => (m.schemaVersion = SCHEMA_VERSION - 1),
    );
    const dry = await runCli(['restore', older, '--data-dir', target]);
    assert.equal(dry.code, 2, 'without --yes it only says what it would do');
    assert.match(dry.stderr, /is a valid backup .* run again with --yes/);
    const ok = await runCli(['restore', older, '--data-dir', target, '--yes']);
    assert.equal(ok.code, 0, ok.stderr);
    const aside = fs.readdirSync(target).find((n) => n.startsWith('pre-restore-'))!;
    assert.equal(fs.readFileSync(path.join(target, aside, 'stacks.db'), 'utf8'), 'the current data', 'the previous data is kept aside');
    assert.equal(fs.readFileSync(path.join(target, 'sources.yaml'), 'utf8'), 'sources: []\n', 'the data dir files come back');
    assert.equal(schemaVersionOfFile(path.join(target, 'stacks.db')), SCHEMA_VERSION, 'migrated to this schema when opened');
  } finally {
    await s.close();
  }
});
