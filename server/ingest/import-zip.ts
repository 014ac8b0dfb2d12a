import fs from 'node:fs';
import yauzl from 'yauzl';
import type { Readable } from 'node:stream';
import { ApiError } from '../../lib/errors.ts';
import { discardStaged, stageBundle, type StagedBundle, type StagedLibrary } from './import-parse.ts';

/** True when the file starts with a zip signature (local file header or empty archive). */
export function isZipFile(file: string): boolean {
  const fd = fs.openSync(file, 'r');
  try {
    const head = Buffer.alloc(4);
    const n = fs.readSync(fd, head, 0, 4, 0);
    return n === 4 && head[0] === 0x50 && head[1] === 0x4b && ((head[2] === 3 && head[3] === 4) || (head[2] === 5 && head[3] === 6));
  } finally {
    fs.closeSync(fd);
  }
}

function openZip(file: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) =>
    yauzl.open(file, { lazyEntries: true, autoClose: true }, (err, zip) => (err || !zip ? reject(err ?? new Error('no zip')) : resolve(zip))),
  );
}

/** Bundle entries: every *.json file, minus folders and macOS metadata. */
function isBundleEntry(name: string): boolean {
  if (name.endsWith('/')) return false;
  const base = name.split('/').pop() ?? '';
  return base.toLowerCase().endsWith('.json') && !base.startsWith('.') && !name.startsWith('__MACOSX/');
}

/**
 * Stages every JSON bundle inside a zip, one entry at a time (entries are streamed, never
 * buffered). maxUncompressed guards against zip bombs.
 */
export async function stageZip(file: string, stagedDir: string, maxUncompressed: number): Promise<StagedBundle> {
  let zip: yauzl.ZipFile;
  try {
    zip = await openZip(file);
  } catch (err) {
    throw new ApiError('validation_error', `The upload looks like a zip file but cannot be read: ${(err as Error).message}`);
  }
  const libraries: StagedLibrary[] = [];
  let force: boolean | null = null;
  let total = 0;
  let bundles = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('error', (err: Error) => reject(new ApiError('validation_error', `The zip file is damaged: ${err.message}`)));
      zip.on('end', () => resolve());
      zip.on('entry', (entry: yauzl.Entry) => {
        if (!isBundleEntry(entry.fileName)) return zip.readEntry();
        total += entry.uncompressedSize;
        if (total > maxUncompressed) return reject(new ApiError('payload_too_large', `The zip file unpacks to more than ${maxUncompressed} bytes.`));
        zip.openReadStream(entry, (err, stream) => {
          if (err || !stream) return reject(new ApiError('validation_error', `${entry.fileName}: cannot be read from the zip: ${err?.message ?? 'no data'}`));
          stageBundle(stream as Readable, stagedDir, `${entry.fileName}: `).then((staged) => {
            bundles++;
            libraries.push(...staged.libraries);
            if (staged.force !== null) force = (force ?? false) || staged.force;
            zip.readEntry();
          }, reject);
        });
      });
      zip.readEntry();
    });
  } catch (err) {
    zip.close();
    discardStaged(libraries);
    throw err;
  }
  if (bundles === 0) throw new ApiError('validation_error', 'The zip file holds no .json bundle.');
  return { libraries, force };
}
