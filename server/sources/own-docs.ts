import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { JobQueue } from '../jobs/queue.ts';
import type { Logger } from '../log.ts';
import type { SnippetInput } from '../../lib/model.ts';
import { OWN_DOCS_ID } from '../../lib/model.ts';
import { markdownToSnippets } from './markdown.ts';
import { runVersionJob, type VersionJobDeps } from '../ingest/version-job.ts';

export const OWN_DOCS_KIND = 'own-docs';

interface OwnDocs {
  revision: string;
  snippets: SnippetInput[];
}

/**
 * The README and docs/*.md of this installation as snippets, and a revision (a hash of their
 * text) that tells whether the indexed copy is current. Links point at the instance itself
 * (`/README.md`, `/docs/<file>`), which serves these files.
 */
export function ownDocs(rootDir: string): OwnDocs {
  const files = [path.join(rootDir, 'README.md'), ...listMarkdown(path.join(rootDir, 'docs'))].filter((f) => fs.existsSync(f));
  const hash = crypto.createHash('sha256');
  const snippets: SnippetInput[] = [];
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    hash.update(file).update('\0').update(text);
    const rel = path.relative(rootDir, file).split(path.sep).join('/');
    const title = /^#[ \t]+(?![ \t])(.+)$/m.exec(text)?.[1]?.trim() ?? rel;
    snippets.push(...markdownToSnippets(text, { sourceId: `/${rel}`, pageTitle: title, breadcrumb: ['Stacks'] }));
  }
  return { revision: hash.digest('hex').slice(0, 16), snippets };
}

function listMarkdown(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => path.join(dir, f));
  } catch {
    return [];
  }
}

/** Indexes the documentation as the library OWN_DOCS_ID, visible to the whole instance; its revision is kept as the library's branch. */
export function registerOwnDocsJob(jobs: Pick<JobQueue, 'register'>, deps: VersionJobDeps & { rootDir: string }): void {
  jobs.register(OWN_DOCS_KIND, async (ctx) => {
    const docs = ownDocs(deps.rootDir);
    await runVersionJob(deps, ctx, {
      meta: {
        id: OWN_DOCS_ID,
        title: 'Stacks',
        description: 'How to use and run this Stacks instance: search and MCP, sources and imports, teamspaces, visibility, sign-in, the console, operations.',
        sourceType: 'files',
        branch: docs.revision,
        visibility: 'instance',
        teamspaceId: null,
      },
      produce: (sink) => sink.add(docs.snippets).then(() => undefined),
    });
  });
}

/** Queues the indexing when the library is missing or older than the documentation on disk (after an upgrade). */
export async function queueOwnDocs(s: { jobs: Pick<JobQueue, 'enqueueUnless'>; store: VersionJobDeps['store']; rootDir: string; log: Logger }): Promise<void> {
  const indexed = await s.store.libraries.get(OWN_DOCS_ID);
  if (indexed?.branch === ownDocs(s.rootDir).revision && (await s.store.libraries.currentVersion(OWN_DOCS_ID, ''))) return;
  const queued = await s.jobs.enqueueUnless(OWN_DOCS_KIND, {}, { libraryId: OWN_DOCS_ID }, { kinds: [OWN_DOCS_KIND] });
  if (queued.created) s.log.info({ libraryId: OWN_DOCS_ID }, "indexing the instance's own documentation");
}
