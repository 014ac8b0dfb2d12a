import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import * as tar from 'tar';
import { ApiError } from '../../lib/errors.ts';

/**
 * The backup archive: one .tar.gz with `manifest.json` first, the two database snapshots
 * (`stacks.db`, `usage.db`) and the data dir's own files under `files/` (the license, sources.yaml,
 * the session secret, and the staged inputs of jobs still to run). The manifest lists every other
 * entry with its size and SHA-256, so a restore can tell a damaged or tampered archive.
 */

export const MANIFEST = 'manifest.json';
export const FORMAT = 'stacks-backup/1';

export const manifestSchema = z.object({
  format: z.literal(FORMAT),
  createdAt: z.string(),
  stacksVersion: z.string(),
  schemaVersion: z.number().int().nonnegative(),
  trigger: z.enum(['cli', 'api', 'schedule']),
  /** Jobs that were queued or running when the snapshot was taken: they run again after a restore. */
  activeJobs: z.number().int().nonnegative(),
  counts: z.record(z.string(), z.number()),
  libraries: z.array(
    z.object({
      id: z.string(),
      title: z.string(),
      visibility: z.string(),
      versions: z.array(z.object({ tag: z.string(), snippets: z.number(), tokens: z.number() })),
    }),
  ),
  files: z.array(z.object({ path: z.string(), bytes: z.number().int().nonnegative(), sha256: z.string().regex(/^[0-9a-f]{64}$/) })),
});
export type Manifest = z.infer<typeof manifestSchema>;

export async function sha256File(file: string): Promise<string> {
  const hash = crypto.createHash('sha256');
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Every regular file under `dir`, as `/`-separated paths relative to it, sorted. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(p);
    }
  };
  if (fs.existsSync(dir)) walk('');
  return out.sort();
}

/** Lists the files of a prepared folder in a manifest (sizes and checksums). */
export async function fileEntries(dir: string, paths: string[]): Promise<Manifest['files']> {
  const out: Manifest['files'] = [];
  for (const p of paths) out.push({ path: p, bytes: fs.statSync(path.join(dir, p)).size, sha256: await sha256File(path.join(dir, p)) });
  return out;
}

/** Writes the folder's manifest and entries as a gzipped tar, to a temporary name renamed at the end (a half-written archive never has the final name). */
export async function writeArchive(dir: string, manifest: Manifest, out: string): Promise<number> {
  fs.writeFileSync(path.join(dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  const partial = `${out}.partial`;
  try {
    // gzip level 1: a database compresses nearly as well as at 6, at a third of the CPU (a backup of a large index stays short).
    await tar.create({ gzip: { level: 1 }, file: partial, cwd: dir, portable: true }, [MANIFEST, ...manifest.files.map((f) => f.path)]);
    // It holds the databases (password and key hashes) and the session secret: its owner's alone.
    fs.chmodSync(partial, 0o600);
    fs.renameSync(partial, out);
  } finally {
    fs.rmSync(partial, { force: true });
  }
  return fs.statSync(out).size;
}

/**
 * Unpacks an archive into an empty folder and checks it against its manifest: the format, every
 * listed file present with its size and checksum, nothing unlisted. Entries that would land outside
 * the folder (absolute paths, `..`) or are not plain files and folders are refused by the unpacker.
 */
export async function unpackArchive(archive: string, into: string): Promise<Manifest> {
  fs.mkdirSync(into, { recursive: true });
  try {
    await tar.extract({
      file: archive,
      cwd: into,
      strict: true,
      filter: (_p, entry) => 'type' in entry && (entry.type === 'File' || entry.type === 'Directory'),
    });
  } catch (err) {
    throw new ApiError('validation_error', `${archive} is not a readable backup archive (${(err as Error).message}).`);
  }
  let manifest: Manifest;
  try {
    manifest = manifestSchema.parse(JSON.parse(fs.readFileSync(path.join(into, MANIFEST), 'utf8')));
  } catch (err) {
    throw new ApiError(
      'validation_error',
      `${archive} has no valid ${MANIFEST} (${(err as Error).message.split('\n')[0]}); it is not a Stacks backup of this format.`,
    );
  }
  const listed = new Set(manifest.files.map((f) => f.path));
  for (const f of manifest.files) {
    const file = path.join(into, f.path);
    if (!fs.existsSync(file)) throw new ApiError('validation_error', `${archive} is damaged: ${f.path} is missing.`);
    if (fs.statSync(file).size !== f.bytes || (await sha256File(file)) !== f.sha256)
      throw new ApiError('validation_error', `${archive} is damaged: the checksum of ${f.path} does not match its manifest.`);
  }
  const extra = filesUnder(into).filter((p) => p !== MANIFEST && !listed.has(p));
  if (extra.length) throw new ApiError('validation_error', `${archive} holds files its manifest does not list (${extra.slice(0, 3).join(', ')}).`);
  return manifest;
}
