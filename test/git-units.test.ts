import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileUrl, parseRepoUrl } from '../server/sources/git/address.ts';
import { decryptSecret, encryptSecret, parseCredentialsKey, sealContext } from '../server/sources/git/credentials.ts';
import { matchTag } from '../server/sources/git/service.ts';
import { mdxToMarkdown } from '../server/sources/git/mdx.ts';
import { rstToMarkdown } from '../server/sources/git/rst.ts';
import { sourceSnippets } from '../server/sources/git/code-index.ts';
import { documentPage, documentSnippets } from '../server/sources/git/documents.ts';
import { matchLicense } from '../server/sources/git/license.ts';
import { mergeOptions, selectFiles } from '../server/sources/git/selection.ts';
import { GitFailed, runGit } from '../server/sources/git/run.ts';
import { listRemote } from '../server/sources/git/remote.ts';
import { loadConfig } from '../server/config.ts';
import { sweepCache } from '../server/sources/git/checkout.ts';
import { rank } from '../server/search/ranker.ts';
import { docsAreThin } from '../server/search/dynamic.ts';
import { prepareQuery } from '../server/search/query.ts';
import type { Candidate } from '../server/search/retrieve.ts';
import type { StoredSnippet } from '../lib/model.ts';
import { FIXTURES } from './helpers/fixtures.ts';

/** The parts of the git source that need no server: addresses, credentials, conversions, selection, ranking of the dynamic index. */

test('repository addresses: transports, library IDs, web links; file://, ext::, local paths and credentials in URLs refused', () => {
  const h = parseRepoUrl('https://git.acme.test/Platform/Payments-API.git');
  assert.deepEqual(
    [h.transport, h.host, h.libraryId, h.web],
    ['https', 'git.acme.test', '/platform/payments-api', 'https://git.acme.test/Platform/Payments-API'],
  );
  assert.equal(fileUrl(h, 'main', 'docs/a b.md', 'setup'), 'https://git.acme.test/Platform/Payments-API/blob/main/docs/a%20b.md#setup');
  const scp = parseRepoUrl('git@gitlab.acme.test:group/sub/tool.git');
  assert.deepEqual(
    [scp.transport, scp.user, scp.url, scp.libraryId, scp.web],
    ['ssh', 'git', 'ssh://git@gitlab.acme.test/group/sub/tool.git', '/sub/tool', 'https://gitlab.acme.test/group/sub/tool'],
  );
  const bb = parseRepoUrl('https://bitbucket.acme.test/scm/PROJ/repo.git');
  assert.equal(fileUrl(bb, 'release/1.x', 'README.md'), 'https://bitbucket.acme.test/projects/PROJ/repos/repo/browse/README.md?at=release%2F1.x');
  const daemon = parseRepoUrl('git://127.0.0.1:9418/acme/widget');
  assert.equal(daemon.web, null);
  assert.equal(fileUrl(daemon, 'v1', 'docs/x.md'), 'git://127.0.0.1:9418/acme/widget#v1:docs/x.md');
  for (const bad of [
    'file:///srv/repo',
    'ext::sh -c id',
    '/srv/git/x.git',
    './x',
    'ftp://host/x.git',
    'https://u:p@host/x.git',
    'https://token@host/x.git',
    'https://host/',
    'https://host/x.git?a=1',
  ]) {
    assert.throws(
      () => parseRepoUrl(bad),
      (e: Error & { code?: string }) => e.code === 'validation_error',
      bad,
    );
  }
});

test('git itself refuses the transports Stacks never allows (GIT_ALLOW_PROTOCOL), whatever reaches it', async () => {
  for (const url of ['ext::sh -c touch% /tmp/stacks-pwned', 'file:///etc']) {
    await assert.rejects(
      runGit({ args: ['ls-remote', url], timeoutMs: 10_000 }),
      (e: GitFailed) => e instanceof GitFailed && /transport .* not allowed|not allowed/.test(e.stderr),
    );
  }
  assert.equal(fs.existsSync('/tmp/stacks-pwned'), false);
});

test('host credentials: AES-256-GCM bound to the host and owner; keys as 64 hex digits or base64', () => {
  const key = parseCredentialsKey('0f'.repeat(32))!;
  assert.equal(parseCredentialsKey(Buffer.alloc(32, 7).toString('base64'))?.length, 32);
  assert.equal(parseCredentialsKey('too short'), null);
  const sealed = encryptSecret(key, 'git.acme.test', 's3cret-token');
  assert.ok(!sealed.includes('s3cret'));
  assert.notEqual(sealed, encryptSecret(key, 'git.acme.test', 's3cret-token'), 'a fresh IV every time');
  assert.equal(decryptSecret(key, 'git.acme.test', sealed), 's3cret-token');
  assert.throws(() => decryptSecret(key, 'evil.test', sealed), 'a secret copied to another host row does not open');
  assert.throws(() => decryptSecret(parseCredentialsKey('1f'.repeat(32))!, 'git.acme.test', sealed));
  // Bound to the owner too: a teamspace's secret moved to another owner's row does not open there.
  assert.equal(sealContext(null, 'git.acme.test'), 'git.acme.test', "the instance's are sealed as every row was before owners (migration 019)");
  const team = encryptSecret(key, sealContext(1, 'git.acme.test'), 'team-token');
  assert.equal(decryptSecret(key, sealContext(1, 'git.acme.test'), team), 'team-token');
  assert.throws(() => decryptSecret(key, sealContext(2, 'git.acme.test'), team), "another teamspace's row");
  assert.throws(() => decryptSecret(key, sealContext(null, 'git.acme.test'), team), "the instance's row");
});

test('tags for a requested version: exact with or without v, else the newest stable within it', () => {
  const tags = ['v1.0.0', 'v1.1.0', 'v1.1.1', 'v1.2.0-rc.1', 'v2.0.0', 'nightly'];
  assert.equal(matchTag(tags, '1.1.0'), 'v1.1.0');
  assert.equal(matchTag(tags, 'v1.1'), 'v1.1.1');
  assert.equal(matchTag(tags, '1'), 'v1.1.1', 'prereleases are not picked for a stable request');
  assert.equal(matchTag(tags, '1.2.0-rc.1'), 'v1.2.0-rc.1');
  assert.equal(matchTag(tags, '3'), null);
  assert.equal(matchTag(tags, 'nightly'), 'nightly');
});

test('MDX without a valid parse falls back to patterns; reStructuredText sections, literal blocks and roles', () => {
  const broken = mdxToMarkdown('# T\n\nA value < 5 and {unclosed\n\n<Note title="Heads up">Keep it short.</Note>\n\n```jsx\n<Keep />\n```\n');
  assert.match(broken, /Heads up/);
  assert.match(broken, /Keep it short\./);
  assert.match(broken, /<Keep \/>/, 'code fences are left alone');
  const md = rstToMarkdown(
    'Title\n=====\n\nSection\n-------\n\nRun this::\n\n   make all\n\nSee :class:`Widget` and ``code``.\n\n.. toctree::\n   :maxdepth: 2\n\n   api\n',
  );
  assert.match(md, /^# Title$/m);
  assert.match(md, /^## Section$/m);
  assert.match(md, /Run this:\n\n```\nmake all\n```/);
  assert.match(md, /See `Widget` and `code`\./);
  assert.doesNotMatch(md, /maxdepth/);
});

test('dynamic index: exported functions and classes with their doc comments and module headers, per language', () => {
  const url = (line: number | null) => `u#L${line}`;
  const ts = sourceSnippets(
    'src/a.ts',
    '/** Module A does things. */\n\n/** Adds two numbers. */\nexport function add(a: number, b: number) {\n  return a + b;\n}\n\nfunction hidden() {}\n\nexport class Box {\n  x = 1;\n}\n',
    url,
  );
  assert.deepEqual(
    ts.map((s) => s.title),
    ['module src/a.ts', 'add()', 'class Box'],
  );
  assert.ok(ts.every((s) => s.isDynamic && s.sourceFile === 'src/a.ts'));
  assert.equal(ts[1]!.description, 'Adds two numbers.');
  assert.equal(ts[1]!.sourceId, 'u#L4');
  const py = sourceSnippets(
    'pkg/m.py',
    '"""Module doc."""\n\ndef run(x):\n    """Runs x."""\n    return x\n\ndef _private():\n    pass\n\nclass Engine:\n    """The engine."""\n',
    url,
  );
  assert.deepEqual(
    py.map((s) => [s.title, s.description]),
    [
      ['module pkg/m.py', 'Module doc.'],
      ['run()', 'Runs x.'],
      ['class Engine', 'The engine.'],
    ],
  );
  const go = sourceSnippets('x.go', '// Package x serves.\npackage x\n\n// Serve serves.\nfunc Serve() error {\n\treturn nil\n}\n\nfunc private() {}\n', url);
  assert.deepEqual(
    go.map((s) => s.title),
    ['module x.go', 'Serve()'],
  );
  const rs = sourceSnippets('lib.rs', '//! The crate.\n\n/// Makes one.\npub fn make() -> u8 {\n    1\n}\n', url);
  assert.deepEqual(
    rs.map((s) => [s.title, s.description]),
    [
      ['module lib.rs', 'The crate.'],
      ['make()', 'Makes one.'],
    ],
  );
});

test('long runs (spaces, tildes and dots in a line; a Rust header of many lines) are read once: conversions, headings, fences, the dynamic index and selection give what they gave on short runs', () => {
  const sp = ' '.repeat(50_000);
  const java = sourceSnippets(
    'A.java',
    `/** Picks one. */\npublic static <T extends A & B> T pick(T a) {\n}\npublic a${sp}b\npublic ${'static  '.repeat(6_000)}X\npublic Map<K, V>${sp}counts${sp}() {\n}\n`,
    () => 'u',
  );
  assert.deepEqual(
    java.map((s) => s.title),
    ['module A.java', 'pick()', 'counts()'],
  );
  const rst = rstToMarkdown(`See \`a${sp}\` and \`the docs${sp}<https://x.test/>\`_.\n\n.. note::${sp}Short.\n\n.. code-block::${sp}python${sp}\n\n   x = 1\n`);
  assert.equal(rst, `See \`a${sp}\` and [the docs](https://x.test/).\n\n**Note:** Short.\n\n\`\`\`python\nx = 1\n\`\`\`\n`);
  assert.equal(mdxToMarkdown(`# T\n\nA < 5 {unclosed\n\n<A${sp}\n<Note${sp}title="Hi"${sp}/>\n`), `# T\n\nA < 5 {unclosed\n\n<A${sp}\nHi\n`);
  assert.equal(documentPage('docs/guide.md', `#${sp}Guide${sp}#${sp}\n\ntext\n`).title, 'Guide');
  // A `~~~` run followed by a backtick opens no fence: the text after it stays prose.
  const doc = documentSnippets(
    'docs/guide.md',
    `# Guide${sp}##\n\nSome text about the guide.\n\n~~~${'~'.repeat(50_000)}\`\nMore text for the page.\n\n\`\`\`${sp}js${sp}\nconst x = 1;\n\`\`\`\n`,
    'u',
  );
  assert.ok(doc.every((s) => s.title === 'Guide'));
  assert.deepEqual(
    doc.flatMap((s) => (s.kind === 'code' ? s.codeList.map((c) => c.language) : [])),
    ['javascript'],
  );
  assert.ok(doc.some((s) => s.kind === 'info' && s.content.includes('More text for the page.')));
  const files = new Map([
    [`requirements-${'.'.repeat(50_000)}!.md`, 10],
    [`requirements-dev${'.'.repeat(50_000)}txt`, 10],
    ['docs/a.md', 10],
  ]);
  assert.deepEqual(selectFiles(files, mergeOptions({}, {})).docs, ['docs/a.md', `requirements-${'.'.repeat(50_000)}!.md`]);
  // A Rust module header of many `//!` lines (each line's prefix was checked again: the square of the line count).
  const crate = sourceSnippets('lib.rs', `${'//! The crate.\n'.repeat(20_000)}\npub fn make() -> u8 {\n    1\n}\n`, () => 'u');
  assert.deepEqual(
    crate.map((s) => s.title),
    ['module lib.rs', 'make()'],
  );
  assert.equal(crate[0]!.description, Array(20_000).fill('The crate.').join('\n'));
});

test('license matching: SPDX texts with their notices; explicit identifiers; unrelated text is no license', () => {
  const spdx = path.join(path.dirname(createRequire(import.meta.url).resolve('spdx-license-list/package.json')), 'licenses');
  const text = (id: string) => (JSON.parse(fs.readFileSync(path.join(spdx, `${id}.json`), 'utf8')) as { licenseText: string }).licenseText;
  assert.equal(matchLicense(fs.readFileSync(path.join(FIXTURES, 'corpus/licenses/zod/LICENSE'), 'utf8')), 'MIT');
  assert.equal(matchLicense(`Copyright 2024 Acme Corp.\n\n${text('Apache-2.0')}`), 'Apache-2.0');
  assert.equal(matchLicense(`Copyright (c) 2020, Acme\nAll rights reserved.\n\n${text('BSD-3-Clause').replace(/^Copyright.*$/m, '')}`), 'BSD-3-Clause');
  assert.equal(matchLicense('SPDX-License-Identifier: MPL-2.0\n'), 'MPL-2.0');
  assert.equal(matchLicense('This is our README. It explains how to install the widget and where to ask questions about it.'), null);
});

test('file selection: documentation and source extensions, default exclusions, stacks.json merged with the request', () => {
  const files = new Map(
    [
      'README.md',
      'CHANGELOG.md',
      'LICENSE.md',
      'CODE_OF_CONDUCT.md',
      'docs/a.mdx',
      'docs/zh-CN/a.md',
      'docs/ja/a.md',
      'i18n/fr/a.md',
      'docs/en/a.md',
      'archived/x.md',
      'legacy/y.rst',
      'docs/requirements.txt',
      'node_modules/p/README.md',
      'src/index.ts',
      'src/index.test.ts',
      'tests/t.py',
      'dist/bundle.min.js',
      'docs/b.ipynb',
      'docs/skip/c.md',
      'docs/notes.txt',
      'img.png',
    ].map((f) => [f, 10]),
  );
  const o = mergeOptions({ excludeFolders: ['docs/skip'] }, { folders: undefined, excludeFiles: ['*.ipynb'] });
  const sel = selectFiles(files, o);
  assert.deepEqual(sel.docs, ['README.md', 'docs/a.mdx', 'docs/en/a.md', 'docs/notes.txt']);
  assert.deepEqual(sel.sources, ['src/index.test.ts', 'src/index.ts']);
  assert.deepEqual(
    selectFiles(files, mergeOptions({ folders: ['docs'] }, { folders: ['src'] })).docs,
    ['docs/a.mdx', 'docs/b.ipynb', 'docs/en/a.md', 'docs/notes.txt', 'docs/skip/c.md'],
    "the request's folders win",
  );
});

function candidate(id: number, isDynamic: boolean, text: string): Candidate {
  const snippet = {
    id,
    versionId: isDynamic ? 2 : 1,
    kind: 'code',
    sourceId: `https://x/#s${id}`,
    title: 'frob',
    description: text,
    language: 'ts',
    pageTitle: 'p',
    breadcrumb: '',
    content: '',
    codeList: [{ language: 'ts', code: text }],
    tokens: 80,
    contentHash: String(id),
    position: id,
    isDynamic,
    sourceFile: isDynamic ? 'src/x.ts' : null,
  } as StoredSnippet;
  return { snippet, libraryId: '/a/b', bm25: 5, lexical: 1, cosine: 1, similarity: null, lexicalRank: 1, vectorRank: null, fused: 0.02, score: 0.02 };
}

test('ranking: a dynamic snippet ranks below documentation of equal relevance; thin documentation is recognized', async () => {
  const q = await prepareQuery('how to compute the frob checksum', null);
  const ranked = rank(q, [candidate(2, true, 'compute the frob checksum'), candidate(1, false, 'compute the frob checksum')]);
  assert.deepEqual(
    ranked.map((c) => c.snippet.isDynamic),
    [false, true],
  );
  assert.ok(ranked[1]!.score < ranked[0]!.score);
  const docs = [1, 2, 3].map((i) => candidate(i, false, 'mount the widget in a page'));
  assert.equal(docsAreThin(q, docs), true, "the docs do not hold the question's words");
  assert.equal(
    docsAreThin(
      q,
      [1, 2, 3].map((i) => candidate(i, false, 'compute the frob checksum here')),
    ),
    false,
  );
  assert.equal(docsAreThin(q, docs.slice(0, 1)), true, 'too few candidates');
});

test('SSH: an unreachable host is a clean fetch_failed that does not show the key, which is removed; a metadata address is forbidden (a real SSH server: git-ssh.test.ts)', async () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'stacks-ssh-'));
  try {
    const addr = parseRepoUrl('ssh://git@127.0.0.1:1/acme/widget.git');
    const auth = { kind: 'ssh' as const, username: 'git', secret: '-----BEGIN OPENSSH PRIVATE KEY-----\nnot-a-real-key\n-----END OPENSSH PRIVATE KEY-----' };
    await assert.rejects(
      listRemote(addr, { policy: { allowPrivate: true }, auth, timeoutMs: 20_000, workDir: work, knownHostsFile: path.join(work, 'known_hosts') }),
      (e: Error & { code?: string }) => e.code === 'fetch_failed' && !e.message.includes('not-a-real-key'),
    );
    assert.deepEqual(
      fs.readdirSync(work).filter((f) => f.startsWith('key-')),
      [],
      'the key file is removed',
    );
    await assert.rejects(
      listRemote(parseRepoUrl('ssh://git@169.254.169.254/x.git'), {
        policy: { allowPrivate: true },
        auth: null,
        timeoutMs: 5_000,
        workDir: work,
        knownHostsFile: path.join(work, 'kh'),
      }),
      (e: Error & { code?: string }) => e.code === 'forbidden',
    );
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
});

test('configuration: STACKS_GIT_CREDENTIALS_KEY must be 32 bytes; the git limits have defaults', () => {
  assert.throws(() => loadConfig({}, { STACKS_GIT_CREDENTIALS_KEY: 'not-a-key' }), /STACKS_GIT_CREDENTIALS_KEY: 32 bytes as 64 hex digits or base64/);
  const c = loadConfig({}, { STACKS_GIT_CREDENTIALS_KEY: 'ab'.repeat(32), STACKS_GIT_MAX_BYTES: '10485760' });
  assert.deepEqual([c.gitCredentialsKey, c.gitMaxBytes, c.gitTimeoutMs], ['ab'.repeat(32), 10485760, 300_000]);
});

test('kept checkouts: the start-up sweep keeps those of Git libraries and of running jobs, removes the rest', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'stacks-cache-'));
  try {
    const dir = (name: string, lib?: string, job?: number) => {
      fs.mkdirSync(path.join(root, name));
      if (lib) fs.writeFileSync(path.join(root, `${name}.json`), JSON.stringify({ libraryId: lib, url: 'u', ref: null, folders: [], branch: 'main' }));
      if (job !== undefined) {
        fs.mkdirSync(path.join(root, `${name}.lock`));
        fs.writeFileSync(path.join(root, `${name}.lock`, 'job'), String(job));
      }
    };
    dir('kept', '/a/git');
    dir('deleted', '/a/gone');
    dir('cloning', undefined, 5);
    dir('crashed', '/a/git2', 6);
    fs.writeFileSync(path.join(root, 'orphan.json'), '{}');
    const removed = await sweepCache(
      root,
      async (job) => job === 5,
      async (lib) => lib === '/a/git' || lib === '/a/git2',
    );
    assert.deepEqual(fs.readdirSync(root).sort(), ['cloning', 'cloning.lock', 'crashed', 'crashed.json', 'kept', 'kept.json']);
    assert.equal(removed, 3);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
