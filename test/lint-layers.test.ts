import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from './helpers/server.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

/** Runs the lint step's import check (the repository's rules) over a tree. */
function depcruise(root?: string): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts/depcruise.mjs'), ...(root ? ['--root', root] : [])], { encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, out: r.stdout + r.stderr };
}

function write(root: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), text);
  }
}

test('the import rules fail on a cycle and on an upward import, and pass on a clean tree', (t) => {
  const dir = tempDir('stacks-lint-');
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const clean = path.join(dir, 'clean');
  write(clean, {
    'lib/text.ts': 'export const words = (s: string): string[] => s.split(" ");\n',
    'server/store/terms.ts': "import { words } from '../../lib/text.ts';\nexport const count = (s: string): number => words(s).length;\n",
    'server/search/rank.ts': "import { count } from '../store/terms.ts';\nexport const rank = (s: string): number => count(s);\n",
  });
  const ok = depcruise(clean);
  assert.equal(ok.status, 0, ok.out);

  const bad = path.join(dir, 'bad');
  write(bad, {
    // A cycle between two services.
    'server/search/a.ts': "import { b } from './b.ts';\nexport const a = (): number => b() + 1;\n",
    'server/search/b.ts': "import { a } from './a.ts';\nexport const b = (): number => (Math.random() > 2 ? a() : 0);\n",
    // The store importing a service: an upward import.
    'server/store/terms.ts': "import { a } from '../search/a.ts';\nexport const terms = (): number => a();\n",
    // The crawler importing the server.
    'crawler/crawl.ts': "import { terms } from '../server/store/terms.ts';\nexport const crawl = (): number => terms();\n",
  });
  const failed = depcruise(bad);
  assert.equal(failed.status, 1, failed.out);
  assert.match(failed.out, /no-circular/);
  assert.match(failed.out, /store-imports-no-service/);
  assert.match(failed.out, /crawler-is-a-library/);
});

// `npm test` runs this suite only after `npm run lint` passed, whose dependency-cruiser step is this
// same check of the same tree (~5 CPU-seconds): it says so in TEST_LINT_PASSED, and the test is not
// run twice. `npm run test:suite` and `node test/run.mjs` run it.
const linted = process.env.TEST_LINT_PASSED === '1' && 'npm test ran this check in its lint step just before the suite';
test('the repository itself passes the import rules', { skip: linted }, () => {
  const r = depcruise();
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /0 errors/);
});
