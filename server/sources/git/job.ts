import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config.ts';
import type { Stores } from '../../store/stores.ts';
import type { JobContext } from '../../jobs/queue.ts';
import { runVersionJob, type VersionJobDeps } from '../../ingest/version-job.ts';
import type { LibraryMeta, LibraryVisibility } from '../../../lib/model.ts';
import { ApiError } from '../../../lib/errors.ts';
import { parseRepoUrl, type RepoAddress } from './address.ts';
import type { GitCredentials } from './credentials.ts';
import { treeBlobs } from './remote.ts';
import { checkoutRepo, type Checkout } from './checkout.ts';
import { mergeOptions, previousTags, selectFiles, stacksJsonSchema, type SelectionOptions, type StacksJson } from './selection.ts';
import { produceFiles } from './produce.ts';
import { detectLicense } from './license.ts';

/** The job kind that indexes a repository's branch or tag. */
export const GIT_JOB = 'git';
/** Bump when what a file turns into changes: older builds' snippets are then not reused. */
const INDEX_FORMAT = 1;

export interface GitJobPayload {
  libraryId: string;
  repoUrl: string;
  /** Branch or tag to clone; null: the default branch. */
  ref: string | null;
  /** The version tag built: '' for the current documentation, else the git tag. */
  tag: string;
  options: Partial<SelectionOptions>;
  /** Re-parse every file (no reuse of the previous build's snippets). */
  full?: boolean;
  teamspaceId: number | null;
  visibility?: LibraryVisibility;
}

export interface GitJobDeps extends VersionJobDeps {
  store: Pick<Stores, 'libraries' | 'snippets' | 'git'>;
  config: Pick<Config, 'dataDir' | 'crawlAllowPrivate' | 'gitTimeoutMs' | 'gitMaxBytes'>;
  /** Only the credentials of the teamspace the payload indexes for are sent (docs/git.md#whose-credentials). */
  credentials: Pick<GitCredentials, 'forRepository'>;
  /** Replaces the library-owner rules a repository's stacks.json gave before with its current ones. */
  setRepoRules(libraryId: string, previous: string[], next: string[]): Promise<void> | void;
  /** Queues the indexing of a tag (stacks.json previousVersions). */
  queueTag(libraryId: string, tag: string): Promise<void> | void;
}

/** Clones the ref, selects and indexes its files (reusing unchanged ones), and swaps the version in. */
export async function runGitJob<P>(deps: GitJobDeps, ctx: JobContext<P>, p: GitJobPayload): Promise<void> {
  const { config, store } = deps;
  const addr = parseRepoUrl(p.repoUrl);
  const workDir = path.join(config.dataDir, 'git', 'work');
  fs.mkdirSync(workDir, { recursive: true, mode: 0o700 });
  const dir = fs.mkdtempSync(path.join(workDir, `job-${ctx.job.id}-`));
  let checkout: Checkout | null = null;
  try {
    ctx.progress({ phase: 'cloning', repoUrl: addr.url, ref: p.ref });
    const started = Date.now();
    checkout = await checkoutFor(deps, ctx, p, addr, dir);
    const cloned = checkout;
    const repoDir = checkout.dir;
    const refName = p.ref ?? cloned.branch ?? 'HEAD';
    const cloneMs = Date.now() - started;
    const blobs = await treeBlobs(repoDir, config.gitTimeoutMs);
    const present = presentFiles(repoDir, blobs.keys());
    const stacksJson = readStacksJson(repoDir, present);
    const options = mergeOptions(p.options, stacksJson.value);
    const selected = selectFiles(present, options);
    const settingsHash = createHash('sha1')
      .update(JSON.stringify({ INDEX_FORMAT, options, web: addr.web, url: addr.url, refName }))
      .digest('hex');
    const previous = await reusable(store, p, settingsHash);
    const meta = await metaFor(
      store,
      p,
      addr,
      refName,
      stacksJson.value,
      detectLicense(
        repoDir,
        [...present.keys()].filter((f) => !f.includes('/')),
      ),
    );
    await runVersionJob(deps, ctx, {
      meta,
      tag: p.tag,
      dynamicIndex: true,
      produce: async (sink) => {
        const producing = Date.now();
        const report = await produceFiles(store, sink, { dir: repoDir, addr, ref: refName, docs: selected.docs, sources: selected.sources, blobs, previous });
        const timings = { [cloned.updated ? 'fetchMs' : 'cloneMs']: cloneMs, selectMs: producing - started - cloneMs, indexMs: Date.now() - producing };
        sink.report(
          { phase: 'indexing', commit: cloned.commit, ref: refName, ...report, timings, ...(stacksJson.error ? { warning: stacksJson.error } : {}) },
          true,
        );
      },
      nothingIndexed: () =>
        new ApiError(
          'validation_error',
          `Nothing to index in ${addr.url} at ${refName}: no documentation (${['.md', '.mdx', '.markdown', '.rst', '.txt', '.ipynb'].join(', ')}) or source files were found${options.folders.length ? ` under ${options.folders.join(', ')}` : ''}.`,
        ),
      afterCommit: async (totals) => {
        const indexed = new Map([...selected.docs, ...selected.sources].map((f) => [f, blobs.get(f)!]));
        await store.git.saveVersionFiles({ versionId: totals.versionId, ref: refName, commit: cloned.commit, settingsHash }, indexed);
        if (p.tag === '') await afterCurrent(deps, p, addr, meta, cloned.commit, ctx.job.id, stacksJson.value);
        ctx.log.info(
          { libraryId: p.libraryId, tag: p.tag, commit: cloned.commit, snippets: totals.snippets, dynamic: totals.dynamicSnippets },
          'git repository indexed',
        );
      },
    });
  } finally {
    checkout?.release();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Clones or fetches the payload's ref into the job's folder. The current documentation keeps its checkout between builds (a refresh fetches what changed); a tag clones afresh. */
async function checkoutFor<P>(deps: GitJobDeps, ctx: JobContext<P>, p: GitJobPayload, addr: RepoAddress, dir: string): Promise<Checkout> {
  const { config, store } = deps;
  const remote = {
    policy: { allowPrivate: config.crawlAllowPrivate },
    auth: await deps.credentials.forRepository(p.teamspaceId, addr.host, addr.port),
    timeoutMs: config.gitTimeoutMs,
    workDir: dir,
    knownHostsFile: path.join(config.dataDir, 'git', 'known_hosts'),
    signal: ctx.signal,
  };
  return checkoutRepo({
    addr,
    libraryId: p.libraryId,
    cacheRoot: p.tag === '' ? path.join(config.dataDir, 'git', 'cache') : null,
    jobDir: dir,
    jobId: ctx.job.id,
    reuse: (await store.git.repo(p.libraryId))?.repoUrl === addr.url,
    clone: { ...remote, ref: p.ref, folders: p.options.folders ?? [], maxBytes: config.gitMaxBytes },
  });
}

/** The files of the tree that are in the checkout, with their sizes (a sparse checkout has only the folders asked for). */
function presentFiles(repoDir: string, files: Iterable<string>): Map<string, number> {
  const present = new Map<string, number>();
  for (const f of files) {
    const st = fs.statSync(path.join(repoDir, f), { throwIfNoEntry: false });
    if (st?.isFile()) present.set(f, st.size);
  }
  return present;
}

/** The version being replaced, when its snippets were built with the same settings (else null: everything is parsed). */
async function reusable(store: GitJobDeps['store'], p: GitJobPayload, settingsHash: string) {
  if (p.full) return null;
  const current = await store.libraries.currentVersion(p.libraryId, p.tag);
  const info = current ? await store.git.versionInfo(current.id) : null;
  if (!current || !info || info.settingsHash !== settingsHash) return null;
  return { versionId: current.id, dynamicVersionId: current.dynamicVersionId, files: await store.git.files(current.id) };
}

async function metaFor(
  store: GitJobDeps['store'],
  p: GitJobPayload,
  addr: RepoAddress,
  refName: string,
  repo: StacksJson | null,
  detected: string | null,
): Promise<LibraryMeta> {
  const lib = await store.libraries.get(p.libraryId);
  const previouslyDetected = (await store.git.repo(p.libraryId))?.options.detectedLicense ?? null;
  // A license an admin set wins; a detected one follows the LICENSE file.
  const license = lib?.license && lib.license !== previouslyDetected ? lib.license : detected;
  const current = p.tag === '';
  return {
    id: p.libraryId,
    title: (current ? repo?.title : undefined) ?? lib?.title ?? addr.path.split('/').pop()!,
    description: (current ? repo?.description : undefined) ?? lib?.description ?? `Documentation of ${addr.path} from ${addr.host}`,
    sourceType: 'repo',
    sourceUrl: addr.url,
    docsRepoUrl: addr.web ?? addr.url,
    branch: current ? refName : null,
    license,
    teamspaceId: p.teamspaceId,
    visibility: p.visibility,
  };
}

/** After the current documentation is swapped in: the repository record, stacks.json's rules and previous versions. */
async function afterCurrent(
  deps: GitJobDeps,
  p: GitJobPayload,
  addr: RepoAddress,
  meta: LibraryMeta,
  commit: string,
  jobId: number,
  repo: StacksJson | null,
): Promise<void> {
  const before = await deps.store.git.repo(p.libraryId);
  const previousRules = Array.isArray(before?.options.repoRules) ? (before.options.repoRules as string[]) : [];
  const rules = repo?.rules ?? [];
  await deps.store.git.saveRepo(
    {
      libraryId: p.libraryId,
      repoUrl: addr.url,
      host: addr.host,
      branch: p.ref,
      options: { ...p.options, repoRules: rules, detectedLicense: meta.license ?? null },
      lastCommit: commit,
      lastJobId: jobId,
    },
    new Date().toISOString(),
  );
  if (rules.join('\n') !== previousRules.join('\n')) await deps.setRepoRules(p.libraryId, previousRules, rules);
  for (const tag of previousTags(repo)) {
    if (!(await deps.store.libraries.currentVersion(p.libraryId, tag))) await deps.queueTag(p.libraryId, tag);
  }
}

function readStacksJson(dir: string, present: Map<string, number>): { value: StacksJson | null; error: string | null } {
  if (!present.has('stacks.json')) return { value: null, error: null };
  try {
    const parsed = stacksJsonSchema.safeParse(JSON.parse(fs.readFileSync(path.join(dir, 'stacks.json'), 'utf8')));
    if (parsed.success) return { value: parsed.data, error: null };
    return { value: null, error: `stacks.json ignored: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}` };
  } catch (err) {
    return { value: null, error: `stacks.json ignored: ${(err as Error).message}` };
  }
}
