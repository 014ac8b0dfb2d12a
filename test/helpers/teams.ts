import fs from 'node:fs';
import path from 'node:path';
import type { TestServer } from './server.ts';
import { devLicense, startTestServer, tempDir } from './server.ts';
import type { LibraryMeta } from '../../lib/model.ts';

/** JSON request helper: body encoded, response parsed. */
export async function call<T = Record<string, unknown>>(
  s: TestServer,
  method: string,
  pathname: string,
  body?: unknown,
  auth?: string | null,
): Promise<{ status: number; body: T; headers: Headers }> {
  const res = await s.api(pathname, {
    method,
    auth,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* text body */
  }
  return { status: res.status, body: parsed as T, headers: res.headers };
}

/** A library row with metadata only (what policies judge); `updatedAt` backdates it. */
export async function addLibrary(s: TestServer, meta: Partial<LibraryMeta> & { id: string }, updatedAt?: string): Promise<void> {
  await s.services.store.libraries.upsert(
    { title: meta.id.split('/')[2] ?? meta.id, description: '', sourceType: 'repo', ...meta },
    updatedAt ?? new Date().toISOString(),
  );
}

/** A library with real indexed snippets, written through the LibraryWriter like any import. */
export async function addIndexedLibrary(s: TestServer, meta: Partial<LibraryMeta> & { id: string }, topic: string): Promise<void> {
  const build = await s.services.writer.begin({ title: meta.id.split('/')[2] ?? meta.id, description: `${topic} library`, sourceType: 'repo', ...meta });
  await build.add([
    {
      kind: 'code',
      sourceId: `https://example.test${meta.id}/guide#${topic}`,
      title: `Configure ${topic}`,
      description: `How to configure ${topic} options`,
      language: 'typescript',
      pageTitle: `${topic} guide`,
      codeList: [{ language: 'typescript', code: `const ${topic}Client = create${topic}({ retries: 3 });` }],
    },
    {
      kind: 'info',
      sourceId: `https://example.test${meta.id}/intro`,
      content: `${topic} is configured with a client object. Set retries and timeouts on the ${topic} client.`,
      breadcrumb: 'Intro',
    },
  ]);
  await build.commit();
}

/** Starts a server whose license allows `maxMembers` members. */
export async function startWithMaxMembers(maxMembers: number): Promise<TestServer> {
  const dataDir = tempDir();
  fs.writeFileSync(path.join(dataDir, 'license.json'), devLicense({ maxMembers }));
  return startTestServer({ dataDir, license: false, overrides: { embedder: null } });
}
