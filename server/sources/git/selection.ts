import path from 'node:path';
import picomatch from 'picomatch';
import { z } from 'zod';
import { DOC_EXTENSIONS } from './documents.ts';
import { SOURCE_EXTENSIONS } from './code-index.ts';

/**
 * Which files of a repository are indexed: documentation files (DOC_EXTENSIONS) and, for the
 * dynamic source-code index, source files (SOURCE_EXTENSIONS); under `folders` when given; never
 * what the exclusions name. The request's options and the repository's own `stacks.json` (at its
 * root) are merged: the request's folders win, exclusions add up.
 */
export const stacksJsonSchema = z
  .object({
    title: z.string().trim().min(1).max(200).optional(),
    description: z.string().trim().max(2000).optional(),
    folders: z.array(z.string().trim().min(1).max(300)).max(100).optional(),
    excludeFolders: z.array(z.string().trim().min(1).max(300)).max(200).optional(),
    excludeFiles: z.array(z.string().trim().min(1).max(300)).max(200).optional(),
    rules: z.array(z.string().trim().min(1).max(2000)).max(100).optional(),
    previousVersions: z
      .array(z.union([z.string().trim().min(1).max(100), z.object({ tag: z.string().trim().min(1).max(100) }).passthrough()]))
      .max(50)
      .optional(),
  })
  .passthrough();

export type StacksJson = z.output<typeof stacksJsonSchema>;

export interface SelectionOptions {
  folders: string[];
  excludeFolders: string[];
  excludeFiles: string[];
}

/** Base names that are never documentation. */
const EXCLUDED_FILE =
  /^(?:(?:changelog|changes|history|news|releases?|license|licence|copying|notice|code[_-]of[_-]conduct|authors|contributors|maintainers|constraints|robots|cmakelists|dependencies|third[_-]party[_-]notices)(?:\.[\w.-]+)?|requirements(?:[-_.][\w.-]*)?)$/i;
/** Folders never indexed: archived material, dependencies, build output, tests. */
const EXCLUDED_FOLDER =
  /^(archive|archived|deprecated|legacy|old|node_modules|vendor|third[_-]party|\.git|\.github|\.gitlab|\.vscode|\.idea|dist|build|out|target|coverage|__pycache__|\.venv|venv|\.tox|site-packages|test|tests|__tests__|__snapshots__|fixtures|__fixtures__|testdata)$/i;
/** Folders that hold translations; their non-English subfolders are left out. */
const I18N_PARENT = /^(i18n|l10n|locale|locales|translations|translated|lang|langs|languages)$/i;
const LOCALE = /^([a-z]{2,3})([-_][a-z]{2,4})?$/i;
/** Two-letter codes of languages documentation is commonly translated into (a bare `docs/ja/` folder). */
const LANGUAGES = new Set(
  'ar bg bn ca cs da de el es et fa fi fr he hi hr hu id it ja ka kk ko lt lv ms nb nl no pl pt ro ru sk sl sr sv ta th tr uk ur uz vi zh'.split(' '),
);
const MAX_DOC_BYTES = 2 * 1024 * 1024;
const MAX_SOURCE_BYTES = 512 * 1024;

/** Merges the request's options with stacks.json. */
export function mergeOptions(request: Partial<SelectionOptions>, repo: StacksJson | null): SelectionOptions {
  const norm = (xs: string[] | undefined) => (xs ?? []).map((x) => x.replace(/^\.?\/+|\/+$/g, '')).filter(Boolean);
  return {
    folders: norm(request.folders?.length ? request.folders : repo?.folders),
    excludeFolders: [...new Set([...norm(request.excludeFolders), ...norm(repo?.excludeFolders)])],
    excludeFiles: [...new Set([...(request.excludeFiles ?? []), ...(repo?.excludeFiles ?? [])])],
  };
}

export interface Selected {
  docs: string[];
  sources: string[];
}

/** Splits a repository's files (path -> size) into documentation and source files to index. */
export function selectFiles(files: Map<string, number>, o: SelectionOptions): Selected {
  const folderMatch = o.excludeFolders.map((g) => picomatch(g, { dot: true }));
  const fileMatch = o.excludeFiles.map((g) => picomatch(g, { dot: true, basename: !g.includes('/') }));
  const docs: string[] = [];
  const sources: string[] = [];
  for (const [file, size] of files) {
    if (o.folders.length && !o.folders.some((f) => file === f || file.startsWith(`${f}/`))) continue;
    const dirs = path.posix.dirname(file) === '.' ? [] : path.posix.dirname(file).split('/');
    if (excludedFolder(dirs)) continue;
    if (dirs.some((_, i) => folderMatch.some((m) => m(dirs.slice(0, i + 1).join('/')) || m(dirs[i]!)))) continue;
    if (fileMatch.some((m) => m(file))) continue;
    const ext = path.posix.extname(file).toLowerCase();
    if ((DOC_EXTENSIONS as readonly string[]).includes(ext)) {
      if (size <= MAX_DOC_BYTES && !EXCLUDED_FILE.test(path.posix.basename(file))) docs.push(file);
    } else if ((SOURCE_EXTENSIONS as readonly string[]).includes(ext) && size <= MAX_SOURCE_BYTES && !/\.min\.[cm]?js$/.test(file)) {
      sources.push(file);
    }
  }
  return { docs: docs.sort(), sources: sources.sort() };
}

function excludedFolder(dirs: string[]): boolean {
  return dirs.some((d, i) => EXCLUDED_FOLDER.test(d) || nonEnglish(d, dirs[i - 1]));
}

/** A non-English locale folder: `ja`, `zh-CN`, `pt_BR` under an i18n folder, or a well-known two-letter language code anywhere. */
function nonEnglish(dir: string, parent: string | undefined): boolean {
  const m = LOCALE.exec(dir);
  if (!m || m[1]!.toLowerCase() === 'en') return false;
  if (parent && I18N_PARENT.test(parent)) return true;
  return LANGUAGES.has(m[1]!.toLowerCase()) && m[1]!.length === 2 && (m[2] !== undefined || dir.length === 2);
}

/** The tags stacks.json asks to have indexed. */
export function previousTags(repo: StacksJson | null): string[] {
  return (repo?.previousVersions ?? []).map((v) => (typeof v === 'string' ? v : v.tag));
}
