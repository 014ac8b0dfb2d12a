import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import zlib from 'node:zlib';
import type { Readable } from 'node:stream';
import { ApiError } from '../errors.ts';

/**
 * SSRF guard for every outbound fetch the server makes on a user's behalf (crawler, OpenAPI URL, llms.txt).
 *
 * Always blocked: unspecified (0.0.0.0/8, ::), link-local (169.254.0.0/16, fe80::/10, which holds the cloud
 * metadata endpoints), cloud metadata addresses and host names, multicast, broadcast/reserved.
 * Blocked unless policy.allowPrivate: loopback, RFC 1918, CGNAT 100.64.0.0/10, ULA fc00::/7, benchmarking 198.18/15.
 * IPv4 embedded in IPv6 (mapped ::ffff:a.b.c.d, compatible, NAT64 64:ff9b::/96, 6to4 2002::/16) is judged as IPv4.
 *
 * safeFetch checks addresses inside the socket's DNS lookup, so the address that is checked is the address that is
 * connected to (no DNS-rebinding window between check and connect).
 */
export interface NetPolicy {
  allowPrivate: boolean;
}

export interface SafeFetchOptions {
  policy: NetPolicy;
  maxBytes: number;
  timeoutMs: number;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export interface SafeFetchResult {
  status: number;
  /** Final URL after redirects. */
  url: string;
  headers: Headers;
  /** Decoded (decompressed) body. */
  body: Buffer;
}

export const MAX_REDIRECTS = 5;
const USER_AGENT = 'Stacks/0.1 (self-hosted documentation indexer)';

/** Host names that resolve to metadata services on some cloud (compared lower-case, without a trailing dot). */
const METADATA_HOSTS = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.tencentyun.com',
  'metadata.platformequinix.com',
]);

/** Metadata service addresses outside link-local (Alibaba sits inside CGNAT; AWS IPv6 inside ULA). */
const METADATA_V4 = new Set(['100.100.100.200', '169.254.169.254', '169.254.170.2']);
const METADATA_V6 = ['fd00:ec2::254'];

type Verdict = { kind: 'allowed' } | { kind: 'private'; reason: string } | { kind: 'blocked'; reason: string };

/** Validates the URL and every address its host resolves to; returns the parsed URL. */
export async function checkUrl(url: string, policy: NetPolicy): Promise<URL> {
  const parsed = parseHttpUrl(url);
  const host = bareHost(parsed.hostname);
  if (METADATA_HOSTS.has(host)) throw forbidden(parsed, 'cloud metadata host');
  if (net.isIP(host)) {
    enforce(parsed, host, classify(host), policy);
    return parsed;
  }
  await resolveChecked(host, policy, parsed);
  return parsed;
}

/**
 * Checks a host name or address literal the way checkUrl checks a URL's host (for transports
 * that are not HTTP, such as git over SSH); returns the checked addresses, so the caller connects
 * to one of them and not to what a second lookup might answer.
 */
export async function checkHost(hostname: string, policy: NetPolicy, label = hostname): Promise<string[]> {
  const host = bareHost(hostname);
  const forUrl = label;
  if (METADATA_HOSTS.has(host)) throw forbidden(forUrl, 'cloud metadata host');
  if (net.isIP(host)) {
    enforce(forUrl, host, classify(host), policy);
    return [host];
  }
  return (await resolveChecked(host, policy, forUrl)).map((a) => a.address);
}

function parseHttpUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ApiError('validation_error', `Invalid URL: ${truncate(url)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ApiError('validation_error', `Only http and https URLs are allowed (got ${parsed.protocol.replace(/:$/, '')})`);
  }
  if (!parsed.hostname) throw new ApiError('validation_error', `URL has no host: ${truncate(url)}`);
  return parsed;
}

function bareHost(hostname: string): string {
  let h = hostname.toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  while (h.endsWith('.')) h = h.slice(0, -1);
  return h;
}

async function resolveChecked(host: string, policy: NetPolicy, forUrl: URL | string): Promise<dns.LookupAddress[]> {
  let addresses: dns.LookupAddress[];
  try {
    addresses = await dns.promises.lookup(host, { all: true, verbatim: true });
  } catch (err) {
    throw new ApiError('fetch_failed', `Could not resolve host ${host}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { cause: err });
  }
  if (addresses.length === 0) throw new ApiError('fetch_failed', `Host ${host} has no addresses`);
  // Every address must pass: a host answering with one public and one private address is refused.
  for (const a of addresses) enforce(forUrl, a.address, classify(a.address), policy);
  return addresses;
}

function enforce(url: URL | string, address: string, verdict: Verdict, policy: NetPolicy): void {
  if (verdict.kind === 'blocked') throw forbidden(url, `${verdict.reason} address ${address}`);
  if (verdict.kind === 'private' && !policy.allowPrivate) {
    throw forbidden(url, `${verdict.reason} address ${address} (private addresses are disabled by STACKS_CRAWL_ALLOW_PRIVATE=false)`);
  }
}

function forbidden(url: URL | string, why: string): ApiError {
  return new ApiError('forbidden', `Fetching ${typeof url === 'string' ? url : `${url.protocol}//${url.host}`} is not allowed: ${why}`);
}

/** Classifies one IP address literal (v4 or v6). Exported for tests. */
export function classify(address: string): Verdict {
  const addr = address.split('%')[0]!;
  if (net.isIPv4(addr)) return classifyV4(v4Bytes(addr));
  if (net.isIPv6(addr)) return classifyV6(v6Bytes(addr));
  return { kind: 'blocked', reason: 'unparseable' };
}

function v4Bytes(addr: string): number[] {
  return addr.split('.').map((p) => Number(p));
}

function classifyV4(b: number[]): Verdict {
  const [a, c] = [b[0]!, b[1]!];
  const dotted = b.join('.');
  if (METADATA_V4.has(dotted)) return { kind: 'blocked', reason: 'cloud metadata' };
  if (a === 0) return { kind: 'blocked', reason: 'unspecified' };
  if (a === 169 && c === 254) return { kind: 'blocked', reason: 'link-local' };
  if (a >= 224 && a <= 239) return { kind: 'blocked', reason: 'multicast' };
  if (a >= 240) return { kind: 'blocked', reason: 'reserved/broadcast' };
  if (a === 127) return { kind: 'private', reason: 'loopback' };
  if (a === 10) return { kind: 'private', reason: 'private (RFC 1918)' };
  if (a === 172 && c >= 16 && c <= 31) return { kind: 'private', reason: 'private (RFC 1918)' };
  if (a === 192 && c === 168) return { kind: 'private', reason: 'private (RFC 1918)' };
  if (a === 100 && c >= 64 && c <= 127) return { kind: 'private', reason: 'carrier-grade NAT' };
  if (a === 198 && (c === 18 || c === 19)) return { kind: 'private', reason: 'benchmarking' };
  if (a === 192 && c === 0 && b[2] === 0) return { kind: 'private', reason: 'IETF protocol assignment' };
  return { kind: 'allowed' };
}

/** Parses an IPv6 literal (with optional trailing dotted IPv4) to 16 bytes. */
function v6Bytes(addr: string): number[] {
  let s = addr.toLowerCase();
  let tail: number[] = [];
  const lastColon = s.lastIndexOf(':');
  if (s.slice(lastColon + 1).includes('.')) {
    tail = v4Bytes(s.slice(lastColon + 1));
    s = s.slice(0, lastColon + 1) + '0:0';
  }
  const [head, rest] = s.includes('::') ? (s.split('::') as [string, string]) : [s, undefined];
  const headParts = head ? head.split(':') : [];
  const restParts = rest !== undefined && rest !== '' ? rest.split(':') : [];
  const fill = rest !== undefined ? 8 - headParts.length - restParts.length : 0;
  const groups = [...headParts, ...Array<string>(fill).fill('0'), ...restParts].map((g) => parseInt(g || '0', 16));
  const bytes: number[] = [];
  for (const g of groups) bytes.push((g >> 8) & 0xff, g & 0xff);
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes;
}

function classifyV6(b: number[]): Verdict {
  const zeroUpTo = (n: number) => b.slice(0, n).every((x) => x === 0);
  const hex = (bytes: number[]) => bytes.map((x) => x.toString(16).padStart(2, '0')).join('');
  for (const m of METADATA_V6) if (hex(v6Bytes(m)) === hex(b)) return { kind: 'blocked', reason: 'cloud metadata' };
  if (zeroUpTo(16)) return { kind: 'blocked', reason: 'unspecified' };
  if (zeroUpTo(15) && b[15] === 1) return { kind: 'private', reason: 'loopback' };
  // IPv4-mapped ::ffff:a.b.c.d and IPv4-compatible ::a.b.c.d
  if (zeroUpTo(10) && ((b[10] === 0xff && b[11] === 0xff) || (b[10] === 0 && b[11] === 0))) return classifyV4(b.slice(12));
  // NAT64 64:ff9b::/96
  if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && b.slice(4, 12).every((x) => x === 0)) return classifyV4(b.slice(12));
  // 6to4 2002:AABB:CCDD::/48 carries IPv4 AA.BB.CC.DD
  if (b[0] === 0x20 && b[1] === 0x02) {
    const inner = classifyV4(b.slice(2, 6));
    if (inner.kind !== 'allowed') return inner;
  }
  if (b[0] === 0xff) return { kind: 'blocked', reason: 'multicast' };
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) return { kind: 'blocked', reason: 'link-local' };
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0xc0) return { kind: 'private', reason: 'site-local' };
  if ((b[0]! & 0xfe) === 0xfc) return { kind: 'private', reason: 'unique local (ULA)' };
  return { kind: 'allowed' };
}

/**
 * GET with the guard applied to the first URL and to every redirect hop (manual redirects, at most MAX_REDIRECTS).
 * The body is decompressed and counted while streaming; more than maxBytes -> payload_too_large.
 * Timeout (whole exchange including redirects) or network failure -> fetch_failed. Non-2xx statuses are returned.
 */
export async function safeFetch(url: string, options: SafeFetchOptions): Promise<SafeFetchResult> {
  const { policy, maxBytes, timeoutMs } = options;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new ApiError('fetch_failed', `Fetching ${truncate(url)} timed out after ${timeoutMs} ms`)), timeoutMs);
  const onOuterAbort = () => controller.abort(options.signal?.reason ?? new ApiError('fetch_failed', 'Fetch aborted'));
  if (options.signal?.aborted) onOuterAbort();
  else options.signal?.addEventListener('abort', onOuterAbort, { once: true });
  try {
    let current = await checkUrl(url, policy);
    const origin = current.origin;
    for (let hop = 0; ; hop++) {
      const headers = { ...(options.headers ?? {}) };
      // Credentials given for the first origin are not forwarded to another origin after a redirect.
      if (current.origin !== origin) {
        for (const k of Object.keys(headers)) if (/^(authorization|cookie|proxy-authorization)$/i.test(k)) delete headers[k];
      }
      const res = await request(current, headers, policy, controller.signal);
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if ([301, 302, 303, 307, 308].includes(status) && location) {
        res.resume();
        if (hop >= MAX_REDIRECTS) throw new ApiError('fetch_failed', `Too many redirects (more than ${MAX_REDIRECTS}) starting at ${truncate(url)}`);
        let next: string;
        try {
          next = new URL(location, current).href;
        } catch {
          throw new ApiError('fetch_failed', `Invalid redirect location from ${current.href}: ${truncate(location)}`);
        }
        current = await checkUrl(next, policy);
        continue;
      }
      const body = await readBody(res, maxBytes, current, controller.signal);
      const outHeaders = new Headers();
      for (const [k, v] of Object.entries(res.headers)) {
        if (v === undefined) continue;
        for (const one of Array.isArray(v) ? v : [v]) outHeaders.append(k, one);
      }
      if (res.headers['content-encoding'] && decoderFor(res.headers['content-encoding'])) {
        outHeaders.delete('content-encoding');
        outHeaders.delete('content-length');
      }
      return { status, url: current.href, headers: outHeaders, body };
    }
  } catch (err) {
    if (controller.signal.aborted) throw controller.signal.reason;
    throw err;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onOuterAbort);
  }
}

/** DNS lookup used by the sockets of safeFetch: resolves, checks every address, then connects to a checked one. */
function guardedLookup(policy: NetPolicy, forUrl: URL): net.LookupFunction {
  return ((hostname: string, opts: dns.LookupOptions, callback: (...args: unknown[]) => void) => {
    resolveChecked(bareHost(hostname), policy, forUrl).then(
      (addresses) => {
        const family = opts.family === 4 || opts.family === 6 ? opts.family : 0;
        const usable = family ? addresses.filter((a) => a.family === family) : addresses;
        if (usable.length === 0) return callback(Object.assign(new Error(`No IPv${family} address for ${hostname}`), { code: 'ENOTFOUND' }));
        if (opts.all) return callback(null, usable);
        return callback(null, usable[0]!.address, usable[0]!.family);
      },
      (err: unknown) => callback(err),
    );
  }) as net.LookupFunction;
}

function request(url: URL, headers: Record<string, string>, policy: NetPolicy, signal: AbortSignal): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const mod = url.protocol === 'https:' ? https : http;
    const req = mod.request(url, {
      method: 'GET',
      headers: { 'user-agent': USER_AGENT, 'accept-encoding': 'gzip, deflate, br', accept: '*/*', ...headers },
      lookup: guardedLookup(policy, url),
      signal,
      agent: false,
    });
    req.on('response', resolve);
    req.on('error', (err) => {
      if (err instanceof ApiError) reject(err);
      else if (signal.aborted) reject(signal.reason);
      else reject(new ApiError('fetch_failed', `Fetching ${url.href} failed: ${(err as NodeJS.ErrnoException).code ?? err.message}`, { cause: err }));
    });
    req.end();
  });
}

function decoderFor(encoding: string): (() => NodeJS.ReadWriteStream) | undefined {
  switch (encoding.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return () => zlib.createGunzip();
    case 'deflate':
      return () => zlib.createInflate();
    case 'br':
      return () => zlib.createBrotliDecompress();
    default:
      return undefined;
  }
}

async function readBody(res: http.IncomingMessage, maxBytes: number, url: URL, signal: AbortSignal): Promise<Buffer> {
  const tooLarge = () => new ApiError('payload_too_large', `Response from ${url.href} is larger than ${maxBytes} bytes`);
  const encoding = res.headers['content-encoding'];
  const decoder = encoding ? decoderFor(encoding) : undefined;
  const declared = Number(res.headers['content-length']);
  if (!decoder && Number.isFinite(declared) && declared > maxBytes) {
    res.destroy();
    throw tooLarge();
  }
  const stream: Readable = decoder ? (res.pipe(decoder()) as unknown as Readable) : res;
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of stream) {
      const buf = chunk as Buffer;
      total += buf.length;
      // Counted after decompression so a small compressed bomb cannot exceed the limit.
      if (total > maxBytes) throw tooLarge();
      chunks.push(buf);
    }
  } catch (err) {
    res.destroy();
    stream.destroy();
    if (err instanceof ApiError) throw err;
    if (signal.aborted) throw signal.reason;
    throw new ApiError('fetch_failed', `Reading the response from ${url.href} failed: ${(err as Error).message}`, { cause: err });
  }
  return Buffer.concat(chunks);
}

function truncate(s: string, n = 200): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}
