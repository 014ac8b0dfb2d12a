import { safeFetch, type NetPolicy } from '../lib/net/guard.ts';
import { CRAWLER_AGENT } from './robots.ts';

export const USER_AGENT = `Mozilla/5.0 (compatible; ${CRAWLER_AGENT}/0.1; self-hosted Stacks documentation indexer)`;
/** Pages larger than this are not documentation we can use. */
export const MAX_PAGE_BYTES = 15 * 1024 * 1024;

export interface FetchedPage {
  status: number;
  /** Final URL after redirects. */
  url: string;
  contentType: string;
  etag: string | null;
  lastModified: string | null;
  body: Buffer;
}

/** Plain HTTP GET through the SSRF guard, with validators for a conditional request when we have them. */
export async function fetchPage(
  url: string,
  options: {
    policy: NetPolicy;
    timeoutMs: number;
    signal?: AbortSignal;
    etag?: string | null;
    lastModified?: string | null;
    accept?: string;
    maxBytes?: number;
  },
): Promise<FetchedPage> {
  const headers: Record<string, string> = { 'user-agent': USER_AGENT, accept: options.accept ?? 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5' };
  if (options.etag) headers['if-none-match'] = options.etag;
  if (options.lastModified) headers['if-modified-since'] = options.lastModified;
  const res = await safeFetch(url, {
    policy: options.policy,
    maxBytes: options.maxBytes ?? MAX_PAGE_BYTES,
    timeoutMs: options.timeoutMs,
    headers,
    signal: options.signal,
  });
  return {
    status: res.status,
    url: res.url,
    contentType: res.headers.get('content-type') ?? '',
    etag: res.headers.get('etag'),
    lastModified: res.headers.get('last-modified'),
    body: res.body,
  };
}

export function isHtml(contentType: string, body: Buffer): boolean {
  if (/html/i.test(contentType)) return true;
  if (contentType && !/text\/plain|octet-stream/i.test(contentType)) return false;
  return /^\s*(<!doctype html|<html)/i.test(body.subarray(0, 512).toString('utf8'));
}

/** Decodes a page body using the charset of the Content-Type or of a `<meta charset>`, defaulting to UTF-8. */
export function decodeHtml(body: Buffer, contentType: string): string {
  const fromHeader = /charset=["']?([\w-]+)/i.exec(contentType)?.[1];
  const fromMeta = /<meta[^>]+charset=["']?([\w-]+)/i.exec(body.subarray(0, 2048).toString('latin1'))?.[1];
  const charset = (fromHeader ?? fromMeta ?? 'utf-8').toLowerCase();
  try {
    return new TextDecoder(charset).decode(body);
  } catch {
    return body.toString('utf8');
  }
}
