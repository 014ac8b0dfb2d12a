import { ApiError } from '../../../lib/errors.ts';

/**
 * A repository address as the git source uses it. Accepted: https and http URLs, ssh://
 * URLs and the scp-like `user@host:path` form, and git:// (read-only, unauthenticated).
 * Everything else (file://, ext::, local paths, other transports) is refused here, and the
 * git processes are run with GIT_ALLOW_PROTOCOL limited to the same list (run.ts).
 */
export type Transport = 'https' | 'http' | 'ssh' | 'git';

export interface RepoAddress {
  /** What git is given: the normalized URL, never with credentials in it. */
  url: string;
  transport: Transport;
  /** Host name, lower case, without brackets. */
  host: string;
  port: number | null;
  /** ssh user (`git` in git@host:org/repo), else null. */
  user: string | null;
  /** Repository path, without the leading slash or a trailing `.git`. */
  path: string;
  /** The library ID: `/<owner>/<repo>` from the path's last two segments. */
  libraryId: string;
  /** The web UI of the repository (https://host/owner/repo), or null when the transport names none. */
  web: string | null;
}

const SCP = /^([A-Za-z0-9._~-]+@)?([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):(?!\/\/)(.+)$/;
const SEGMENT = /[^a-z0-9._-]+/g;

export function parseRepoUrl(raw: string): RepoAddress {
  const text = raw.trim();
  if (!text) throw new ApiError('validation_error', 'repoUrl: must not be empty.');
  if (/^ext::|^fd::|^file:/i.test(text) || text.startsWith('/') || text.startsWith('.') || /^[A-Za-z]:\\/.test(text)) {
    throw new ApiError('validation_error', `repoUrl: ${short(text)} is not allowed: only https, http, ssh and git:// repositories can be indexed.`);
  }
  let url: URL;
  const scp = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? null : SCP.exec(text);
  try {
    url = new URL(scp ? `ssh://${scp[1] ?? ''}${scp[2]}/${scp[3]!.replace(/^\/+/, '')}` : text);
  } catch {
    throw new ApiError(
      'validation_error',
      `repoUrl: ${short(text)} is not a repository URL (https://host/owner/repo.git, ssh://git@host/owner/repo.git or git@host:owner/repo.git).`,
    );
  }
  const transport = url.protocol.replace(/:$/, '').toLowerCase();
  if (transport !== 'https' && transport !== 'http' && transport !== 'ssh' && transport !== 'git') {
    throw new ApiError('validation_error', `repoUrl: the ${transport} transport is not allowed: only https, http, ssh and git:// repositories can be indexed.`);
  }
  if (url.password || (url.username && transport !== 'ssh')) {
    throw new ApiError(
      'validation_error',
      'repoUrl: do not put credentials in the URL; store them for the host with `stacks git-hosts add` (they are kept encrypted).',
    );
  }
  if (url.search || url.hash) throw new ApiError('validation_error', 'repoUrl: a repository URL has no query string or fragment.');
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, '');
  if (!host) throw new ApiError('validation_error', `repoUrl: ${short(text)} names no host.`);
  const path = decodeURIComponent(url.pathname)
    .replace(/^\/+|\/+$/g, '')
    .replace(/\.git$/i, '');
  const segments = path.split('/').filter(Boolean);
  if (segments.length === 0 || segments.some((s) => s === '..' || s === '.'))
    throw new ApiError('validation_error', `repoUrl: ${short(text)} names no repository path.`);
  const repo = clean(segments[segments.length - 1]!);
  const owner = clean(segments.length > 1 ? segments[segments.length - 2]! : host.split('.')[0]!);
  if (!repo || !owner) throw new ApiError('validation_error', `repoUrl: cannot derive a library ID from ${short(text)}.`);
  const port = url.port ? Number(url.port) : null;
  const user = transport === 'ssh' ? url.username || null : null;
  const bracketed = host.includes(':') ? `[${host}]` : host;
  const normalized = `${transport}://${user ? `${user}@` : ''}${bracketed}${port ? `:${port}` : ''}/${segments.join('/')}${/\.git$/i.test(url.pathname) ? '.git' : ''}`;
  const webScheme = transport === 'http' ? 'http' : 'https';
  const webPort = transport === 'http' || transport === 'https' ? (port ? `:${port}` : '') : '';
  return {
    url: normalized,
    transport,
    host,
    port,
    user,
    path: segments.join('/'),
    libraryId: `/${owner}/${repo}`,
    web: transport === 'git' ? null : `${webScheme}://${bracketed}${webPort}/${webPath(segments)}`,
  };
}

/** Bitbucket Server clones under /scm/<project>/<repo>; its web UI lives under /projects/<project>/repos/<repo>. */
function webPath(segments: string[]): string {
  if (segments.length === 3 && segments[0] === 'scm') return `projects/${segments[1]}/repos/${segments[2]}`;
  return segments.join('/');
}

/**
 * Where a file is shown in the host's web UI: `<web>/blob/<ref>/<path>` (GitHub, Gitea, Forgejo;
 * GitLab redirects it to /-/blob/), `<web>/browse/<path>?at=<ref>` on Bitbucket Server. Without a
 * web UI (git://): `<url>#<ref>:<path>`, still a stable address.
 */
export function fileUrl(addr: RepoAddress, ref: string, file: string, fragment = ''): string {
  const p = file.split('/').map(encodeURIComponent).join('/');
  const hash = fragment ? `#${fragment}` : '';
  if (!addr.web) return `${addr.url}#${encodeURIComponent(ref)}:${p}${fragment ? `:${fragment}` : ''}`;
  if (addr.web.includes('/projects/') && addr.path.startsWith('scm/')) return `${addr.web}/browse/${p}?at=${encodeURIComponent(ref)}${hash}`;
  return `${addr.web}/blob/${ref.split('/').map(encodeURIComponent).join('/')}/${p}${hash}`;
}

function clean(segment: string): string {
  return segment
    .toLowerCase()
    .replace(/\.git$/, '')
    .replace(SEGMENT, '-')
    .replace(/^[-.]+|[-.]+$/g, '');
}

function short(s: string): string {
  return JSON.stringify(s.length > 120 ? `${s.slice(0, 120)}…` : s);
}
