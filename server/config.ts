import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import cron from 'node-cron';
import { publicUrlSchema } from '../lib/public-url.ts';

/**
 * One validated configuration object. Sources, lowest precedence first:
 * built-in defaults, environment variables (STACKS_* and the few plain ones), CLI flags.
 * An unknown STACKS_* variable or an invalid value stops startup with a message naming it.
 */
const bool = z.union([z.boolean(), z.enum(['1', '0', 'true', 'false', 'yes', 'no'])]).transform((v) => v === true || v === '1' || v === 'true' || v === 'yes');
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
/** Express's `trust proxy`: `false`, `true` (any peer), a hop count, or addresses, subnets and loopback / linklocal / uniquelocal, comma-separated. */
const PROXY_ITEM = /^(?:loopback|linklocal|uniquelocal|[0-9.]+(?:\/\d{1,2})?|[0-9a-f:]+(?::[0-9.]+)?(?:\/\d{1,3})?)$/i;
const trustProxy = z
  .string()
  .refine(
    (v) => /^(?:true|false|\d{1,2})$/.test(v) || v.split(',').every((item) => PROXY_ITEM.test(item.trim())),
    'false, true, a hop count, or addresses/subnets/loopback/linklocal/uniquelocal separated by commas',
  );

/**
 * Which identity-provider groups sign in as what: `group=teamspace:role` items separated by commas,
 * tried in order, the first group the user is in wins; `*` matches everyone the provider vouches for.
 */
const roleMap = z.string().transform((v, ctx) => {
  const out: { group: string; teamspace: string; role: 'owner' | 'admin' | 'member' }[] = [];
  for (const item of v
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)) {
    const m = /^([^=\s]+)=([a-z0-9][a-z0-9._-]{0,63}):(owner|admin|member)$/.exec(item);
    if (!m) {
      ctx.addIssue({ code: 'custom', message: `"${item}" is not group=teamspace:role (role owner, admin or member)` });
      return z.NEVER;
    }
    out.push({ group: m[1]!, teamspace: m[2]!, role: m[3] as 'owner' | 'admin' | 'member' });
  }
  return out;
});

/** A node-cron expression (five or six fields). */
const cronExpr = z
  .string()
  .trim()
  .refine((v) => cron.validate(v), 'a cron expression such as "0 3 * * *"');

export const configSchema = z
  .object({
    port: int(0, 65535).default(3000),
    host: z.string().min(1).default('0.0.0.0'),
    /** The address generated links and MCP configurations use; wins over the console's setting (server/system/public-url.ts). */
    publicUrl: publicUrlSchema.optional(),
    dataDir: z.string().min(1).default('data'),
    /**
     * PostgreSQL (15 or newer) holding every piece of state instead of <dataDir>/stacks.db, so that
     * several nodes serve one instance (docs/operations.md, "A cluster on PostgreSQL"). The data dir
     * then keeps only node-local files: staged uploads, the session secret, the model.
     */
    databaseUrl: z
      .string()
      .trim()
      .regex(/^postgres(ql)?:\/\/\S+$/, 'a postgres:// URL, e.g. postgres://stacks:secret@db.internal:5432/stacks')
      .optional(),
    /** Connections this node keeps to PostgreSQL (STACKS_DATABASE_URL); unset: databasePoolSizeOf. */
    databasePoolSize: int(2, 200).optional(),
    licenseFile: z.string().min(1).optional(),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    dev: bool.default(false),
    /** Jobs processed at once by this process. */
    jobConcurrency: int(1, 16).default(1),
    /** JSON request body limit. */
    bodyLimit: z
      .string()
      .regex(/^\d+(kb|mb)$/i, 'a size like 1mb or 512kb')
      .default('2mb'),
    /** Largest import upload (bytes). */
    importMaxBytes: int(1024, 1024 ** 3).default(100 * 1024 * 1024),
    /**
     * Embedding provider: model (the shipped sentence-embedding model, falling back to builtin when it
     * is not installed), builtin (offline word vectors) or openai (an OpenAI-compatible /v1/embeddings URL).
     */
    embedProvider: z.enum(['model', 'builtin', 'openai']).default('model'),
    /** ONNX Runtime threads of the model's background lane (the embed job); questions always get one thread of their own. */
    embedThreads: int(1, 64).default(1),
    /** A vector cache file of the model (server/embed/vector-cache.ts): texts it holds are not run through the model. */
    embedCache: z.string().min(1).optional(),
    embedUrl: z.string().url().optional(),
    embedModel: z.string().min(1).default('text-embedding-3-small'),
    embedApiKey: z.string().min(1).optional(),
    embedDims: int(8, 4096).optional(),
    /** Optional OpenAI-compatible chat endpoint for research mode and reranking. */
    chatUrl: z.string().url().optional(),
    chatModel: z.string().min(1).default('gpt-4o-mini'),
    chatApiKey: z.string().min(1).optional(),
    /** Research-mode requests allowed per user and ISO week. */
    researchWeeklyQuota: int(0, 1_000_000).default(50),
    /** Crawler: pages rendered at once, per-page timeout, whether private (RFC 1918, loopback) addresses may be fetched. */
    crawlConcurrency: int(1, 16).default(4),
    crawlPageTimeoutMs: int(1000, 300_000).default(30_000),
    crawlAllowPrivate: bool.default(true),
    crawlRespectRobots: bool.default(true),
    chromiumPath: z.string().min(1).default('/usr/bin/chromium'),
    /**
     * Which peers may tell, with X-Forwarded-For / X-Forwarded-Proto, the client's address and that
     * the request came over TLS (HSTS is sent only then). Default: a reverse proxy on the same machine.
     */
    trustProxy: trustProxy.default('loopback'),
    /**
     * Git sources (docs/git.md): the key that encrypts stored Git host credentials (AES-256-GCM;
     * 64 hex digits or base64 of 32 bytes; without it only public repositories can be indexed),
     * and the limits of one clone: its time and the bytes it may write.
     */
    gitCredentialsKey: z
      .string()
      .trim()
      .refine(
        (v) =>
          /^[0-9a-fA-F]{64}$/.test(v) || (/^[A-Za-z0-9+/_-]{43}=?$/.test(v) && Buffer.from(v.replace(/-/g, '+').replace(/_/g, '/'), 'base64').length === 32),
        '32 bytes as 64 hex digits or base64 (e.g. `openssl rand -hex 32`)',
      )
      .optional(),
    gitTimeoutMs: int(5_000, 24 * 3_600_000).default(300_000),
    gitMaxBytes: int(1024 * 1024, 64 * 1024 ** 3).default(500 * 1024 * 1024),
    /** Whether MCP and search accept requests without an API key. */
    allowAnonymousSearch: bool.default(true),
    /**
     * Learn each library version's ranking model from its own headings in a background job (see
     * docs/retrieval.md). Off: every version ranks with the default model (a box that must never
     * spend CPU on it, and the test suite, where most tests do not look at ranking).
     */
    learnRanking: bool.default(true),
    /** Index this installation's own documentation (README, docs/) as the library /stacks/stacks at start. */
    ownDocs: bool.default(true),
    /** Days audit entries are kept (older ones are pruned daily). */
    auditRetentionDays: int(1, 36_500).default(365),
    /** Per-key request limit per minute (0 = off). */
    rateLimitPerMinute: int(0, 1_000_000).default(600),
    /** Worker threads answering /api/v2/context retrieval (0 = in the request thread). Unset: 2, or 0 in dev mode. */
    searchWorkers: int(0, 16).optional(),
    /** MB per searching thread for the vectors of recently searched library versions, the workers' held once for all (about 110 MB per million snippets; 0 = off). */
    vectorCacheMb: int(0, 1_048_576).default(200),
    /** Single sign-on with OpenID Connect (authorization code + PKCE): the issuer, this client, and the group mapping. */
    oidcIssuer: z.string().url().optional(),
    oidcClientId: z.string().min(1).optional(),
    oidcClientSecret: z.string().min(1).optional(),
    /** Where the provider sends people back; default: <the request's origin>/api/auth/oidc/callback. */
    oidcRedirectUri: z.string().url().optional(),
    oidcScopes: z.string().min(1).default('openid profile email groups'),
    oidcGroupsClaim: z.string().min(1).default('groups'),
    oidcRoleMap: roleMap.optional(),
    /** Only for an identity provider reached over plain http (a test, a lab); never in production. */
    oidcAllowHttp: bool.default(false),
    /** Where backup archives go (default <dataDir>/backups). */
    backupDir: z.string().min(1).optional(),
    /** Cron expression for scheduled backups; unset: none. */
    backupSchedule: cronExpr.optional(),
    /** Scheduled backups kept (the newest); manual ones are never deleted. */
    backupKeep: int(1, 10_000).default(7),
    /** A second port serving only GET /metrics without a key (for a scraper on a trusted network); unset: /metrics on the main port only (instance owner's key, or metricsToken). */
    metricsPort: int(0, 65535).optional(),
    /**
     * A bearer token that opens GET /metrics on the main port and nothing else: a scraper then holds
     * no API key (an owner's key could change the instance). Long enough not to be guessed.
     */
    metricsToken: z.string().trim().min(24, 'at least 24 characters (e.g. `openssl rand -hex 32`)').max(512).optional(),
    /** Bind address of the metrics port. */
    metricsHost: z.string().min(1).default('127.0.0.1'),
    /** Cron expression for reconciling <dataDir>/sources.yaml (it is also reconciled at start and by POST /api/sources/reconcile); 'off' for never. */
    sourcesSchedule: z.union([z.literal('off'), cronExpr]).default('*/15 * * * *'),
  })
  .superRefine((c, ctx) => {
    if (c.oidcIssuer === undefined) return;
    if (!c.oidcClientId) ctx.addIssue({ code: 'custom', path: ['oidcClientId'], message: 'required with STACKS_OIDC_ISSUER' });
    if (!c.oidcRoleMap?.length)
      ctx.addIssue({
        code: 'custom',
        path: ['oidcRoleMap'],
        message: 'required with STACKS_OIDC_ISSUER: group=teamspace:role items, e.g. devs=default:member',
      });
    if (c.oidcIssuer.startsWith('http:') && !c.oidcAllowHttp)
      ctx.addIssue({ code: 'custom', path: ['oidcIssuer'], message: 'an http issuer needs STACKS_OIDC_ALLOW_HTTP=true (use https)' });
  });

export type Config = z.infer<typeof configSchema>;

/** Retrieval worker threads: `searchWorkers`, else 2, or none in dev mode. */
export function searchWorkerCount(config: Pick<Config, 'searchWorkers' | 'dev'>): number {
  return config.searchWorkers ?? (config.dev ? 0 : 2);
}

/**
 * This node's PostgreSQL connections: `databasePoolSize`, else 4 per core, at most 16. A node's
 * statements are short and mostly CPU on a box's few cores; more backends than that only wait for
 * a core (on 2 cores one node served 11-17% more context answers with 8 than with 16).
 */
export function databasePoolSizeOf(config: Pick<Config, 'databasePoolSize'>, cores = os.availableParallelism()): number {
  return config.databasePoolSize ?? Math.min(16, 4 * cores);
}

/** Each retrieval worker's share of the vector cache, in bytes (the pool holds this times the workers, once: server/search/shared-vectors.ts). */
export function workerVectorCacheBytes(config: Pick<Config, 'vectorCacheMb'>): number {
  return config.vectorCacheMb * 1024 * 1024;
}

/**
 * The vector cache of the request thread's connection. With workers it only scans for the
 * search-model job (one version at a time) and when a worker fails: a few versions' worth, not
 * a copy of the whole index held idle after the models are learned.
 */
export function requestThreadVectorCacheBytes(config: Pick<Config, 'searchWorkers' | 'dev' | 'vectorCacheMb'>): number {
  const bytes = workerVectorCacheBytes(config);
  return searchWorkerCount(config) > 0 ? Math.min(bytes, 32 * 1024 * 1024) : bytes;
}
export type ConfigInput = z.input<typeof configSchema>;

/** Environment variable -> config key. Every STACKS_* variable must be listed here. */
const envMap: Record<string, keyof Config> = {
  PORT: 'port',
  HOST: 'host',
  DATA_DIR: 'dataDir',
  LICENSE_FILE: 'licenseFile',
  LOG_LEVEL: 'logLevel',
  STACKS_DEV: 'dev',
  STACKS_PORT: 'port',
  STACKS_HOST: 'host',
  STACKS_PUBLIC_URL: 'publicUrl',
  STACKS_DATA_DIR: 'dataDir',
  STACKS_DATABASE_URL: 'databaseUrl',
  STACKS_DATABASE_POOL_SIZE: 'databasePoolSize',
  STACKS_LICENSE_FILE: 'licenseFile',
  STACKS_LOG_LEVEL: 'logLevel',
  STACKS_JOB_CONCURRENCY: 'jobConcurrency',
  STACKS_BODY_LIMIT: 'bodyLimit',
  STACKS_IMPORT_MAX_BYTES: 'importMaxBytes',
  STACKS_EMBED_PROVIDER: 'embedProvider',
  STACKS_EMBED_THREADS: 'embedThreads',
  STACKS_EMBED_CACHE: 'embedCache',
  STACKS_EMBED_URL: 'embedUrl',
  STACKS_EMBED_MODEL: 'embedModel',
  STACKS_EMBED_API_KEY: 'embedApiKey',
  STACKS_EMBED_DIMS: 'embedDims',
  STACKS_CHAT_URL: 'chatUrl',
  STACKS_CHAT_MODEL: 'chatModel',
  STACKS_CHAT_API_KEY: 'chatApiKey',
  STACKS_RESEARCH_WEEKLY_QUOTA: 'researchWeeklyQuota',
  STACKS_CRAWL_CONCURRENCY: 'crawlConcurrency',
  STACKS_CRAWL_PAGE_TIMEOUT_MS: 'crawlPageTimeoutMs',
  STACKS_CRAWL_ALLOW_PRIVATE: 'crawlAllowPrivate',
  STACKS_CRAWL_RESPECT_ROBOTS: 'crawlRespectRobots',
  STACKS_CHROMIUM_PATH: 'chromiumPath',
  STACKS_ALLOW_ANONYMOUS_SEARCH: 'allowAnonymousSearch',
  STACKS_TRUST_PROXY: 'trustProxy',
  STACKS_AUDIT_RETENTION_DAYS: 'auditRetentionDays',
  STACKS_OWN_DOCS: 'ownDocs',
  STACKS_LEARN_RANKING: 'learnRanking',
  STACKS_RATE_LIMIT_PER_MINUTE: 'rateLimitPerMinute',
  STACKS_SEARCH_WORKERS: 'searchWorkers',
  STACKS_VECTOR_CACHE_MB: 'vectorCacheMb',
  STACKS_GIT_CREDENTIALS_KEY: 'gitCredentialsKey',
  STACKS_GIT_TIMEOUT_MS: 'gitTimeoutMs',
  STACKS_GIT_MAX_BYTES: 'gitMaxBytes',
  STACKS_OIDC_ISSUER: 'oidcIssuer',
  STACKS_OIDC_CLIENT_ID: 'oidcClientId',
  STACKS_OIDC_CLIENT_SECRET: 'oidcClientSecret',
  STACKS_OIDC_REDIRECT_URI: 'oidcRedirectUri',
  STACKS_OIDC_SCOPES: 'oidcScopes',
  STACKS_OIDC_GROUPS_CLAIM: 'oidcGroupsClaim',
  STACKS_OIDC_ROLE_MAP: 'oidcRoleMap',
  STACKS_OIDC_ALLOW_HTTP: 'oidcAllowHttp',
  STACKS_BACKUP_DIR: 'backupDir',
  STACKS_BACKUP_SCHEDULE: 'backupSchedule',
  STACKS_BACKUP_KEEP: 'backupKeep',
  STACKS_METRICS_PORT: 'metricsPort',
  STACKS_METRICS_HOST: 'metricsHost',
  STACKS_METRICS_TOKEN: 'metricsToken',
  STACKS_SOURCES_SCHEDULE: 'sourcesSchedule',
};

/** STACKS_* variables that are read elsewhere on purpose (the CLI's key, stack traces, the bench corpus) and are not config keys. */
const envPassThrough = new Set(['STACKS_API_KEY', 'STACKS_DEBUG', 'STACKS_BENCH_DIR', 'STACKS_BENCH_MODEL_DIR']);

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig(flags: Partial<Record<keyof Config, unknown>> = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || value === '') continue;
    const key = envMap[name];
    if (key) raw[key] = value;
    else if (name.startsWith('STACKS_') && !envPassThrough.has(name)) {
      throw new ConfigError(
        `Unknown environment variable ${name}. Known: ${Object.keys(envMap)
          .filter((n) => n.startsWith('STACKS_'))
          .join(', ')}`,
      );
    }
  }
  for (const [key, value] of Object.entries(flags)) if (value !== undefined) raw[key] = value;
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = String(issue.path[0] ?? '');
    const source =
      Object.keys(flags).includes(key) && flags[key as keyof Config] !== undefined
        ? `--${kebab(key)}`
        : (Object.entries(envMap).find(([n, k]) => k === key && env[n])?.[0] ?? key);
    throw new ConfigError(`Invalid configuration value for ${source}: ${issue.message}`);
  }
  const config = parsed.data;
  config.dataDir = path.resolve(config.dataDir);
  if (config.licenseFile) config.licenseFile = path.resolve(config.licenseFile);
  config.backupDir = path.resolve(config.backupDir ?? path.join(config.dataDir, 'backups'));
  if (config.embedProvider === 'openai' && !config.embedUrl) throw new ConfigError('STACKS_EMBED_URL is required when STACKS_EMBED_PROVIDER=openai');
  return config;
}

function kebab(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
