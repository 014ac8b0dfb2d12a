import fs from 'node:fs';
import http from 'node:http';
import { jobFinished, type JobState } from '../lib/model.ts';

/** Percentile of an ascending-sorted list (nearest rank). */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Memory of a process in MB from /proc: resident, peak resident, file-backed (SQLite mmap) and anonymous (heap). */
export function memoryOf(pid: number): { rss: number; peak: number; file: number; anon: number; shmem: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024, file: kb('RssFile') / 1024, anon: kb('RssAnon') / 1024, shmem: kb('RssShmem') / 1024 };
}

/** CPU time (user + system, ms, all threads) a process has used: a figure that does not depend on how busy the machine is. */
export function serverCpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (100/s)
}

/** A job as GET /api/jobs/:id answers it, once it has finished (succeeded, failed or cancelled), asked for every 100 ms. */
export async function finishedJob<J extends { state: JobState }>(url: string, key: string, jobId: number): Promise<J> {
  for (;;) {
    const job = (await (await fetch(`${url}/api/jobs/${jobId}`, { headers: { authorization: `Bearer ${key}` } })).json()) as J;
    if (jobFinished(job.state)) return job;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Developer questions the load benchmarks cycle through (the same mix for every run). */
export const BENCH_QUESTIONS = [
  'How do I configure the logger with custom options?',
  'register a plugin with options',
  'validate the request body against a schema',
  'handle errors in async route handlers',
  'set up authentication middleware',
  'stream a large response',
  'configure caching and invalidation',
  'write a unit test for a route',
  'parse query string parameters',
  'graceful shutdown and closing connections',
  'environment variables and configuration files',
  'retry failed requests with backoff',
];

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 256 });

/**
 * GET over node:http with a keep-alive agent: the load generator of the throughput benchmarks.
 * It runs on the same 2 cores as the server it measures, and node:http costs about 0.33 ms of CPU
 * per request where fetch (undici) costs 0.8-0.9 ms (measured on the context benchmark), CPU the
 * server under test would otherwise have had.
 */
export function httpGet(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: keepAlive, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/**
 * A fetch over node:http with the same keep-alive agent, for clients that take a fetch function
 * (the MCP SDK's Streamable HTTP transport): the whole body is read before the Response resolves.
 */
export const httpFetch: typeof fetch = (input, init) =>
  new Promise((resolve, reject) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const headers = Object.fromEntries(new Headers(init?.headers).entries());
    const req = http.request(url, { method: init?.method ?? 'GET', headers, agent: keepAlive }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        const out = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out.set(k, Array.isArray(v) ? v.join(', ') : v);
        resolve(new Response([204, 205, 304].includes(status) ? null : Buffer.concat(chunks), { status, headers: out }));
      });
    });
    req.on('error', reject);
    if (init?.body !== undefined && init.body !== null) req.write(init.body as string | Buffer);
    req.end();
  });

/**
 * What a benchmark's server runs and what it was asked with: `/api/health`'s embedder, checked
 * against the corpus's (a server with another embedder would recreate the corpus's vector table
 * and answer lexically), and a count of the answers' `X-Stacks-Vectors` values.
 */
export async function checkEmbedder(url: string, corpus: { embedder: string | null; vectors?: { note: string } }): Promise<string> {
  const res = await httpGet(`${url}/api/health`);
  const health = JSON.parse(res.body) as { embedder?: { id: string; dims: number; fallback: string | null } };
  const e = health.embedder;
  if (!e || e.id !== corpus.embedder)
    throw new Error(`the server runs embedder ${e?.id ?? 'none'} (${e?.fallback ?? 'no fallback'}), the corpus holds ${corpus.embedder}`);
  return `server embedder ${e.id}, ${e.dims} dims${corpus.vectors ? ` (corpus vectors: ${corpus.vectors.note})` : ''}`;
}

/** Counts the `X-Stacks-Vectors` header values of the answers a benchmark got. */
export class VectorsHeaderCount {
  private readonly counts = new Map<string, number>();

  add(headers: http.IncomingHttpHeaders): void {
    const v = String(headers['x-stacks-vectors'] ?? 'absent');
    this.counts.set(v, (this.counts.get(v) ?? 0) + 1);
  }

  toString(): string {
    return `X-Stacks-Vectors: ${[...this.counts].map(([v, n]) => `${v} ${n}`).join(', ') || 'no answers'}`;
  }
}
