// What a job is doing, in words a person uses ("Crawling docs.internal", "Learning ranking for
// zod"), and how far it got: a fraction for a progress bar when the job knows its total, and a
// short line of counts. The job kinds and their progress fields are those of docs/crawler.md,
// docs/import.md, docs/sources.md, docs/git.md and docs/embeddings.md.

/** A library's name for a sentence: its title when the console knows it, else the last part of its ID. */
function nameOf(id, titles) {
  if (!id) return 'a library';
  return titles.get(id) ?? id.split('/').filter(Boolean).pop() ?? id;
}

function hostOf(url) {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}

/** "Crawling docs.internal", "Embedding zod 3.24", …; `titles` maps library IDs to titles. */
export function jobTitle(j, titles) {
  const lib = nameOf(j.libraryId, titles);
  const at = j.version ? ` ${j.version}` : '';
  const p = j.progress ?? {};
  switch (j.kind) {
    case 'import':
      return `Importing ${lib}`;
    case 'crawl':
      return `Crawling ${hostOf(p.startUrl) ?? lib}`;
    case 'git':
      return `Indexing ${lib}${at} from Git`;
    case 'version-fetch':
      return `Fetching version ${j.version ?? '?'} of ${lib}`;
    case 'search-model':
      return `Learning ranking for ${lib}`;
    case 'reembed':
      return 'Embedding snippets with the sentence model';
    case 'source-openapi':
      return `Reading the OpenAPI description of ${lib}`;
    case 'source-llmstxt':
      return `Reading the llms.txt of ${lib}`;
    case 'source-files':
      return `Reading the files of ${lib}`;
    case 'own-docs':
      return 'Indexing the Stacks documentation';
    default:
      return j.libraryId ? `${j.kind}: ${lib}` : j.kind;
  }
}

const n = (v) => (typeof v === 'number' ? v.toLocaleString() : null);
const plural = (v, word) => `${n(v)} ${word}${v === 1 ? '' : 's'}`;

/**
 * How far a job got: `fraction` (0-1) when its total is known, else null; `text`, a short line of
 * counts or its phase.
 */
export function jobProgress(j) {
  const p = j.progress ?? {};
  if (j.state === 'queued') return { fraction: null, text: j.position ? `waiting (${j.position} in line)` : 'waiting' };
  if (typeof p.skipped === 'string') return { fraction: null, text: `skipped: ${p.skipped}` };
  if (j.kind === 'search-model') return { fraction: j.state === 'succeeded' ? 1 : null, text: j.state === 'succeeded' ? 'ranking learned' : 'learning' };
  if (j.kind === 'crawl' && typeof p.pagesDone === 'number') {
    const seen = p.pagesDone + (p.pagesQueued ?? 0);
    const parts = [`${n(p.pagesDone)} of ${plural(seen, 'page')}`];
    if (p.pagesFailed) parts.push(`${n(p.pagesFailed)} failed`);
    if (typeof p.snippets === 'number') parts.push(plural(p.snippets, 'snippet'));
    return { fraction: seen > 0 ? p.pagesDone / seen : null, text: parts.join(', ') };
  }
  if (typeof p.total === 'number' && p.total > 0) {
    const done = p.stored ?? p.snippets ?? p.done ?? 0;
    return { fraction: Math.min(1, done / p.total), text: `${n(done)} of ${plural(p.total, 'snippet')}` };
  }
  if (j.kind === 'git' && typeof p.files === 'number' && p.files > 0 && typeof p.parsed === 'number') {
    const done = p.parsed + (p.reused ?? 0) + (p.failed ?? 0);
    return { fraction: Math.min(1, done / p.files), text: `${n(done)} of ${plural(p.files, 'file')}${p.reused ? ` (${n(p.reused)} unchanged)` : ''}` };
  }
  if (typeof p.links === 'number' && p.links > 0)
    return { fraction: (p.linksDone ?? 0) / p.links, text: `${n(p.linksDone ?? 0)} of ${plural(p.links, 'link')}` };
  const parts = [];
  if (p.phase && p.phase !== 'done') parts.push(String(p.phase));
  if (typeof p.files === 'number') parts.push(plural(p.files, 'file'));
  if (typeof p.snippets === 'number') parts.push(plural(p.snippets, 'snippet'));
  return { fraction: j.state === 'succeeded' ? 1 : null, text: parts.join(', ') || (j.state === 'running' ? 'working' : '') };
}
