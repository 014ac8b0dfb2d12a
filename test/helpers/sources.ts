import fs from 'node:fs';
import path from 'node:path';
import type { TestServer } from './server.ts';
import type { Job, StoredSnippet } from '../../lib/model.ts';
import { FIXTURES } from './fixtures.ts';

/** Waits until the job has finished and returns it. */
export async function waitJob(s: TestServer, id: number, timeoutMs = 45_000): Promise<Job> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const job = s.services.jobs.get(id);
    if ((await job).state !== 'queued' && (await job).state !== 'running') return job;
    if (Date.now() > end) throw new Error(`job ${id} still ${(await job).state} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Every snippet of the library's served version. */
export async function snippetsOf(s: TestServer, libraryId: string): Promise<StoredSnippet[]> {
  const v = s.services.store.libraries.currentVersion(libraryId, '');
  if (!v) return [];
  return s.services.store.snippets.list(v.id, 1_000_000);
}

/** Files and folders left in the sources staging area. */
export function stagingEntries(s: TestServer): string[] {
  const root = s.services.sources.stagingRoot;
  return fs.existsSync(root) ? fs.readdirSync(root) : [];
}

export async function postJson(
  s: TestServer,
  pathname: string,
  body: unknown,
  auth?: string | null,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await s.api(pathname, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), auth });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

export async function postForm(
  s: TestServer,
  pathname: string,
  form: FormData,
  auth?: string | null,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await s.api(pathname, { method: 'POST', body: form, auth });
  const text = await res.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { raw: text };
  }
  return { status: res.status, body };
}

/** A file of test/fixtures (path relative to it) as an upload. */
export function fixtureBlob(rel: string, type = 'application/octet-stream'): Blob {
  return new Blob([fs.readFileSync(path.join(FIXTURES, rel))], { type });
}
