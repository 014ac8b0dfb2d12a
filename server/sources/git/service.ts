import fs from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import type { Config } from '../../config.ts';
import type { Stores } from '../../store/stores.ts';
import type { JobContext, JobQueue } from '../../jobs/queue.ts';
import type { Library } from '../../../lib/model.ts';
import { ApiError } from '../../../lib/errors.ts';
import { ownerConflict, type Submitter } from '../../../lib/owner.ts';
import { parseRepoUrl } from './address.ts';
import type { GitCredentials } from './credentials.ts';
import { listRemote, type RemoteRefs } from './remote.ts';
import { GIT_JOB, runGitJob, type GitJobDeps, type GitJobPayload } from './job.ts';
import { sweepCache } from './checkout.ts';
import type { SelectionOptions } from './selection.ts';

/**
 * Git repositories as a source (docs/git.md): submitting a repository (checked while the client
 * waits: the address guard, the credentials and the branch, with one `git ls-remote`), refreshing
 * it, indexing a tag on request (search rule 8), and the `git` job kind.
 */
export interface GitSubmission {
  libraryId: string;
  jobId: number;
  position: number | null;
}

export interface GitServiceDeps {
  config: Pick<Config, 'dataDir' | 'crawlAllowPrivate' | 'gitTimeoutMs' | 'gitMaxBytes'>;
  store: Pick<Stores, 'libraries' | 'git' | 'jobs'>;
  jobs: Pick<JobQueue, 'enqueueUnless'>;
  credentials: Pick<GitCredentials, 'forRepository'>;
}

/** Kinds of job that index a library from its repository (a refresh waits for all of them). */
const INDEXING_KINDS = [GIT_JOB, 'version-fetch'];
const busy = (libraryId: string, jobId: number) => new ApiError('conflict', `${libraryId} is being indexed right now (job ${jobId}); wait for it to finish.`);

export class GitSourceService {
  constructor(private readonly d: GitServiceDeps) {}

  /** The remote's branches and tags, through the guard and with the credentials of the teamspace the repository is indexed for. */
  async refs(repoUrl: string, teamspaceId: number | null, signal?: AbortSignal): Promise<RemoteRefs> {
    const addr = parseRepoUrl(repoUrl);
    return listRemote(addr, {
      policy: { allowPrivate: this.d.config.crawlAllowPrivate },
      auth: await this.d.credentials.forRepository(teamspaceId, addr.host, addr.port),
      timeoutMs: this.d.config.gitTimeoutMs,
      workDir: this.workDir(),
      knownHostsFile: path.join(this.d.config.dataDir, 'git', 'known_hosts'),
      signal,
    });
  }

  async submit(input: { repoUrl: string; branch?: string; force?: boolean } & Partial<SelectionOptions>, who: Submitter): Promise<GitSubmission> {
    const addr = parseRepoUrl(input.repoUrl);
    const libraryId = addr.libraryId;
    const existing = await this.d.store.libraries.get(libraryId);
    const taken = ownerConflict(existing, who);
    if (taken) throw new ApiError('conflict', taken);
    await this.assertIdle(libraryId);
    const repo = await this.d.store.git.repo(libraryId);
    if (repo && repo.repoUrl !== addr.url)
      throw new ApiError('conflict', `${libraryId} is indexed from ${repo.repoUrl}; delete it first to index ${addr.url} under the same ID.`);
    if (existing && (await this.d.store.libraries.currentVersion(libraryId, '')) && !input.force) {
      throw new ApiError(
        'conflict',
        `${libraryId} is already indexed; send "force": true to index it again, or refresh it (POST /api/projects${libraryId}/refresh).`,
      );
    }
    const refs = await this.refs(addr.url, who.teamspaceId);
    if (input.branch && !refs.branches.includes(input.branch) && !refs.tags.includes(input.branch)) {
      throw new ApiError(
        'validation_error',
        `branch: ${addr.url} has no branch or tag "${input.branch}" (branches: ${refs.branches.slice(0, 10).join(', ') || 'none'}).`,
      );
    }
    if (!input.branch && refs.branches.length === 0) throw new ApiError('fetch_failed', `${addr.url} has no branches (an empty repository).`);
    const payload: GitJobPayload = {
      libraryId,
      repoUrl: addr.url,
      ref: input.branch ?? null,
      tag: '',
      full: input.force ?? false,
      options: { folders: input.folders ?? [], excludeFolders: input.excludeFolders ?? [], excludeFiles: input.excludeFiles ?? [] },
      teamspaceId: who.teamspaceId,
      visibility: who.visibility,
    };
    return { libraryId, ...(await this.queueIdle(payload, { libraryId, memberId: who.memberId, teamspaceId: who.teamspaceId })) };
  }

  /** Whether a library is indexed from a repository. */
  async isGit(libraryId: string): Promise<boolean> {
    return (await this.d.store.git.repo(libraryId)) !== null;
  }

  /** Indexes a library's branch again; only files whose blob changed are parsed. 409 while it is being indexed. */
  async refresh(lib: Library, memberId: number | null): Promise<GitSubmission> {
    const repo = await this.d.store.git.repo(lib.id);
    if (!repo) throw new ApiError('conflict', `${lib.id} was not added from a Git repository; import or add it again to refresh it.`);
    await this.assertIdle(lib.id);
    const payload: GitJobPayload = {
      libraryId: lib.id,
      repoUrl: repo.repoUrl,
      ref: repo.branch,
      tag: '',
      options: optionsOf(repo.options),
      teamspaceId: lib.teamspaceId,
      visibility: lib.visibility,
    };
    return { libraryId: lib.id, ...(await this.queueIdle(payload, { libraryId: lib.id, memberId, teamspaceId: lib.teamspaceId })) };
  }

  /** Queues a tag of a git library (stacks.json previousVersions). */
  async queueTag(libraryId: string, tag: string): Promise<void> {
    const repo = await this.d.store.git.repo(libraryId);
    const lib = await this.d.store.libraries.get(libraryId);
    if (!repo || !lib) return;
    const payload: GitJobPayload = {
      libraryId,
      repoUrl: repo.repoUrl,
      ref: tag,
      tag,
      options: optionsOf(repo.options),
      teamspaceId: lib.teamspaceId,
      visibility: lib.visibility,
    };
    // Not when this tag is queued or being indexed already (checked as it is queued).
    await this.d.jobs.enqueueUnless(
      GIT_JOB,
      payload,
      { libraryId, memberId: null, teamspaceId: lib.teamspaceId },
      { kinds: [GIT_JOB], match: (j) => (j.payload as Partial<GitJobPayload>).tag === tag },
    );
  }

  /** The repository's tag that a requested version names (matchTag), asked of the remote; null when there is none or the library is not from Git. */
  async tagFor(libraryId: string, version: string): Promise<string | null> {
    const repo = await this.d.store.git.repo(libraryId);
    const lib = await this.d.store.libraries.get(libraryId);
    if (!repo || !lib) return null;
    return matchTag((await this.refs(repo.repoUrl, lib.teamspaceId)).tags, version);
  }

  /**
   * The version-fetch job's work for a git library: finds the tag the requested version names
   * (exactly, else the newest stable tag under it: "2" -> v2.3.1) and indexes it.
   */
  async fetchVersion<P>(deps: GitJobDeps, ctx: JobContext<P>, libraryId: string, version: string): Promise<string> {
    const repo = await this.d.store.git.repo(libraryId);
    const lib = await this.d.store.libraries.get(libraryId);
    if (!repo || !lib)
      throw new ApiError(
        'validation_error',
        `Cannot index ${libraryId} at version ${version}: it was not added from a Git repository (there is no git source for it). Import a bundle of that version, or add the repository with POST /api/parse.`,
      );
    const refs = await this.refs(repo.repoUrl, lib.teamspaceId, ctx.signal);
    const tag = matchTag(refs.tags, version);
    if (!tag) throw new ApiError('validation_error', `${repo.repoUrl} has no tag for version ${version} (tags: ${refs.tags.slice(-10).join(', ') || 'none'}).`);
    await runGitJob(deps, ctx, {
      libraryId,
      repoUrl: repo.repoUrl,
      ref: tag,
      tag,
      options: optionsOf(repo.options),
      teamspaceId: lib.teamspaceId,
      visibility: lib.visibility,
    });
    return tag;
  }

  /**
   * Removes clone folders left by jobs that are not running (a job interrupted by a crash reruns
   * in a fresh folder), their locks on kept checkouts, and the kept checkouts of libraries no
   * longer indexed from Git. Those of running jobs, in this or another process, are left alone.
   */
  async sweepWork(): Promise<number> {
    const running = async (id: number) => (await this.d.store.jobs.get(id))?.state === 'running';
    let removed = await sweepCache(path.join(this.d.config.dataDir, 'git', 'cache'), running, (id) => this.isGit(id));
    const dir = this.workDir();
    if (!fs.existsSync(dir)) return removed;
    for (const name of fs.readdirSync(dir)) {
      const id = /^job-(\d+)-/.exec(name)?.[1];
      if (!id) continue;
      const job = await this.d.store.jobs.get(Number(id));
      if (job?.state === 'running') continue;
      fs.rmSync(path.join(dir, name), { recursive: true, force: true });
      removed++;
    }
    return removed;
  }

  private async assertIdle(libraryId: string): Promise<void> {
    const active = (await Promise.all(INDEXING_KINDS.map((k) => this.d.store.jobs.active(k, libraryId)))).flat();
    if (active.length) throw busy(libraryId, active[0]!.id);
  }

  /** Queues a build of the library unless one is queued or running (checked as it is queued: another request may have queued one since assertIdle). */
  private async queueIdle(payload: GitJobPayload, options: { libraryId: string; memberId: number | null; teamspaceId: number | null }) {
    const queued = await this.d.jobs.enqueueUnless(GIT_JOB, payload, options, { kinds: INDEXING_KINDS });
    if (!queued.created) throw busy(options.libraryId, queued.id);
    return { jobId: queued.id, position: queued.position };
  }

  private workDir(): string {
    return path.join(this.d.config.dataDir, 'git', 'work');
  }
}

function optionsOf(o: Record<string, unknown>): Partial<SelectionOptions> {
  const list = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  return { folders: list(o.folders), excludeFolders: list(o.excludeFolders), excludeFiles: list(o.excludeFiles) };
}

/** The tag a requested version names: the same version ("1.2.0" = "v1.2.0"), else the newest stable tag within it ("1" or "1.2"). */
export function matchTag(tags: string[], requested: string): string | null {
  const norm = (s: string) =>
    s
      .trim()
      .replace(/^v(?=\d)/i, '')
      .replace(/_/g, '.')
      .toLowerCase();
  const want = norm(requested);
  const exact = tags.find((t) => norm(t) === want);
  if (exact) return exact;
  if (!/^\d+(\.\d+)?$/.test(want)) return null;
  const within = tags
    .map((t) => ({ t, v: semver.valid(norm(t)) }))
    .filter((x): x is { t: string; v: string } => x.v !== null && semver.prerelease(x.v) === null && `${x.v}.`.startsWith(`${want}.`));
  return within.sort((a, b) => semver.rcompare(a.v, b.v))[0]?.t ?? null;
}
