import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { Stores } from '../../server/store/stores.ts';
import { rng } from './rng.ts';

/**
 * Generates a large, realistic import bundle straight to a file (never whole in memory):
 * varied prose and code built from a word list, every snippet unique, ~500 bytes each.
 */
const WORDS = (
  'request response handler route server client option plugin schema validation hook middleware stream buffer ' +
  'promise callback error retry timeout header cookie session token cache query param body json encode decode ' +
  'parse serialize config default value instance register decorate reply status payload logger level child ' +
  'transport worker thread queue batch index search vector embedding document library version release tag branch'
).split(' ');
const LANGS = ['js', 'ts', 'python', 'go', 'rust', 'sh'];

function words(r: () => number, n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(WORDS[Math.floor(r() * WORDS.length)]!);
  return out.join(' ');
}

export interface GenerateOptions {
  project: string;
  title?: string;
  snippets: number;
  /** Share of code snippets (rest are info snippets). */
  codeShare?: number;
  seed?: number;
  /** Text mixed into every snippet, to tell two generated versions apart. */
  marker?: string;
  /** Omit token counts (the importer then counts with the tokenizer). */
  omitTokens?: boolean;
}

/** Writes `{"libraries":[...]}` with one generated library; returns the byte size. */
export async function writeBundle(file: string, libs: GenerateOptions[]): Promise<number> {
  const out = fs.createWriteStream(file);
  const write = async (s: string) => {
    if (!out.write(s)) await new Promise<void>((resolve) => out.once('drain', resolve));
  };
  // The items of one JSON array (brackets written by the caller), 1,000 per write.
  const writeItems = async (n: number, item: (i: number) => Record<string, unknown>) => {
    let chunk: string[] = [];
    for (let i = 0; i < n; i++) {
      chunk.push(JSON.stringify(item(i)));
      if (chunk.length >= 1000 || i === n - 1) {
        await write((i >= chunk.length ? ',' : '') + chunk.join(','));
        chunk = [];
      }
    }
  };
  await write('{"libraries":[');
  for (const [li, o] of libs.entries()) {
    const r = rng(o.seed ?? 42 + li);
    const nCode = Math.round(o.snippets * (o.codeShare ?? 0.6));
    const marker = o.marker ? `${o.marker} ` : '';
    const base = `https://example.com/${o.project.replace(/^\//, '')}/docs`;
    await write(
      `${li ? ',' : ''}{"project":${JSON.stringify(o.project)},"title":${JSON.stringify(o.title ?? o.project.split('/').pop())},` +
        `"description":"Generated library for import tests","type":"repo","language":"en","branch":"main","docsRepoUrl":"https://github.com${o.project}",` +
        `"docsSiteUrl":"${base}","totalTokens":0,"codeSnippets":[`,
    );
    await writeItems(nCode, (i) => {
      const lang = LANGS[i % LANGS.length]!;
      const code =
        `// ${marker}example ${i}\nconst ${WORDS[i % WORDS.length]}${i} = await ${words(r, 3).replace(/ /g, '.')}({ ${words(r, 4)
          .split(' ')
          .map((w, k) => `${w}${k}: ${k}`)
          .join(', ')} });\n` + `if (!${WORDS[i % WORDS.length]}${i}.ok) throw new Error('${words(r, 5)}');\nreturn ${WORDS[(i + 7) % WORDS.length]}(${i});`;
      const s: Record<string, unknown> = {
        id: `${base}/page-${Math.floor(i / 20)}.md#snippet-${i}`,
        title: `${marker}${words(r, 4)} ${i}`,
        description: `${words(r, 12)}.`,
        language: lang,
        codeList: [{ language: lang, code }],
      };
      if (!o.omitTokens) s.tokens = Math.round((code.length + 120) / 4);
      return s;
    });
    await write('],"infoSnippets":[');
    await writeItems(o.snippets - nCode, (i) => {
      const content = `${marker}${words(r, 30)}. ${words(r, 20)} (section ${i}).`;
      const s: Record<string, unknown> = { id: `${base}/guide-${Math.floor(i / 10)}.md#part-${i}`, content, breadcrumb: `Guide > ${words(r, 2)} > Part ${i}` };
      if (!o.omitTokens) s.tokens = Math.round(content.length / 4);
      return s;
    });
    await write(']}');
  }
  await write(']}');
  await new Promise<void>((resolve) => out.end(resolve));
  return fs.statSync(file).size;
}

/**
 * After an import interrupted by a killed process and run again: the library has one version,
 * served, holding exactly `n` snippets (none lost, none stored twice) — on either backend.
 */
export async function assertImportedOnce(store: Stores, libraryId: string, n: number): Promise<void> {
  const versions = await store.libraries.versions(libraryId);
  assert.equal(versions.length, 1, 'the interrupted build was dropped');
  const v = versions[0]!;
  assert.equal(v.isCurrent, true);
  assert.equal(v.totalSnippets, n);
  const kinds = await store.snippets.countByKind(v.id);
  assert.equal(kinds.code + kinds.info, n, 'exactly n rows: none lost, none duplicated');
  assert.equal((await store.snippets.hashes(v.id)).size, n);
}
