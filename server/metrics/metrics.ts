import client from 'prom-client';
import type { LeaseStats } from '../jobs/queue.ts';
import type { Backend, PoolStats } from '../store/stores.ts';

/** What the gauges read at each scrape (the composition root wires them to the store, the search pool and the caches). */
export interface MetricsSources {
  /** Jobs by state (queued, running, succeeded, failed, cancelled). */
  jobCounts(): Promise<Record<string, number>>;
  /** Bytes per database file (stacks.db, stacks.db-wal, usage.db, ...). */
  databaseBytes(): Record<string, number>;
  /** Served library versions and their snippets. */
  catalog(): Promise<{ libraries: number; versions: number; snippets: number }>;
  /** Retrieval worker threads alive, and requests sent to them and not yet answered. */
  workers(): { live: number; inFlight: number };
  /** In-memory caches: entries held, lookups served from memory (hits) and read again (misses) since start. */
  caches(): Record<string, { entries: number; hits: number; misses: number }>;
  /** The backend (fixed at start) and this node's connection pool (null without one: SQLite). */
  database(): { backend: Backend; pool: PoolStats | null };
  /** This node's job leases: held now, lost to other nodes and orphans queued again since start. */
  leases(): LeaseStats;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const JOB_BUCKETS = [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 14_400];

/**
 * The Prometheus metrics of one server (its own registry: several servers in one test process
 * never mix): request counts and latency per route, job durations, and gauges read when scraped.
 */
export class Metrics {
  readonly registry = new client.Registry();
  private readonly requests: client.Counter<'method' | 'route' | 'status'>;
  private readonly latency: client.Histogram<'method' | 'route'>;
  private readonly jobs: client.Histogram<'kind' | 'outcome'>;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    client.collectDefaultMetrics({ register: this.registry });
    this.requests = new client.Counter({
      name: 'stacks_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.latency = new client.Histogram({
      name: 'stacks_http_request_duration_seconds',
      help: 'HTTP request latency by method and route pattern',
      labelNames: ['method', 'route'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.jobs = new client.Histogram({
      name: 'stacks_job_duration_seconds',
      help: 'Background job runs by kind and outcome',
      labelNames: ['kind', 'outcome'],
      buckets: JOB_BUCKETS,
      registers,
    });
    gauges(registers, sources);
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.requests.inc({ method, route, status: String(status) });
    this.latency.observe({ method, route }, seconds);
  }

  observeJob(kind: string, outcome: string, seconds: number): void {
    this.jobs.observe({ kind, outcome }, seconds);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}

/** Gauges (and counters kept elsewhere) whose values are read from the sources at each scrape. */
function gauges(registers: client.Registry[], s: MetricsSources): void {
  // prom-client awaits a collect that returns a promise (the store's reads are asynchronous).
  const gauge = (name: string, help: string, labelNames: string[], read: (g: client.Gauge<string>) => Promise<void> | void) =>
    new client.Gauge({
      name,
      help,
      labelNames,
      registers,
      async collect() {
        this.reset();
        await read(this);
      },
    });
  gauge('stacks_jobs', 'Jobs in the durable queue by state (queued and running: the queue depth)', ['state'], async (g) => {
    for (const [state, n] of Object.entries(await s.jobCounts())) g.set({ state }, n);
  });
  gauge('stacks_database_bytes', 'Size of the database files', ['file'], (g) => {
    for (const [file, n] of Object.entries(s.databaseBytes())) g.set({ file }, n);
  });
  gauge('stacks_libraries', 'Libraries with a served version', [], async (g) => g.set((await s.catalog()).libraries));
  gauge('stacks_library_versions', 'Served library versions (current documentation and tags)', [], async (g) => g.set((await s.catalog()).versions));
  gauge('stacks_snippets', 'Snippets in the served versions', [], async (g) => g.set((await s.catalog()).snippets));
  gauge('stacks_retrieval_workers', 'Retrieval worker threads alive', [], (g) => g.set(s.workers().live));
  gauge('stacks_retrieval_in_flight', 'Retrieval requests sent to the workers and not yet answered', [], (g) => g.set(s.workers().inFlight));
  gauge('stacks_cache_entries', 'Entries held by an in-memory cache', ['cache'], (g) => {
    for (const [cache, c] of Object.entries(s.caches())) g.set({ cache }, c.entries);
  });
  const counter = (name: string, help: string, pick: (c: { hits: number; misses: number }) => number) =>
    new client.Counter({
      name,
      help,
      labelNames: ['cache'],
      registers,
      collect() {
        this.reset();
        for (const [cache, c] of Object.entries(s.caches())) this.inc({ cache }, pick(c));
      },
    });
  counter('stacks_cache_hits_total', 'Lookups an in-memory cache answered', (c) => c.hits);
  counter('stacks_cache_misses_total', 'Lookups an in-memory cache had to read or compute', (c) => c.misses);
  cluster(registers, s, gauge);
}

/** The backend, this node's connection pool and its job leases: what tells one node of a cluster from another. */
function cluster(
  registers: client.Registry[],
  s: MetricsSources,
  gauge: (name: string, help: string, labelNames: string[], read: (g: client.Gauge<string>) => void) => void,
): void {
  gauge('stacks_database_info', 'The database backend holding the state (value 1)', ['backend'], (g) => g.set({ backend: s.database().backend }, 1));
  // Only with a pool: an unlabelled gauge would show 0 connections for SQLite, which has no pool to show.
  if (s.database().pool) {
    const pool = (pick: (p: PoolStats) => number) => (g: client.Gauge<string>) => {
      const stats = s.database().pool;
      if (stats) g.set(pick(stats));
    };
    gauge(
      'stacks_database_pool_size',
      'Connections the pool of this node may open (STACKS_DATABASE_POOL_SIZE)',
      [],
      pool((p) => p.size),
    );
    gauge(
      'stacks_database_pool_connections',
      'Connections open in the pool of this node',
      [],
      pool((p) => p.total),
    );
    gauge(
      'stacks_database_pool_idle_connections',
      'Open connections of the pool not in use',
      [],
      pool((p) => p.idle),
    );
    gauge(
      'stacks_database_pool_waiting',
      'Queries waiting for a free connection',
      [],
      pool((p) => p.waiting),
    );
  }
  gauge('stacks_job_leases_held', 'Jobs running on this node (it holds their lease and beats their heartbeat)', [], (g) => g.set(s.leases().held));
  const counter = (name: string, help: string, read: () => number) =>
    new client.Counter({
      name,
      help,
      registers,
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  counter('stacks_job_leases_lost_total', 'Jobs another node took over from this one after it missed their heartbeats', () => s.leases().lost);
  counter('stacks_jobs_recovered_total', 'Jobs this node queued again because their owner was gone or its heartbeat stale', () => s.leases().recovered);
}
