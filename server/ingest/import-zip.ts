import fs from 'node:fs';
import { ApiError } from '../../lib/errors.ts';
import { discardStaged, stageBundle, type StagedBundle, type StagedLibrary } from './import-parse.ts';
import { walkZip, ZipRefused } from './zip-entries.ts';

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

/** Bundle entries: every *.json file, minus folders and macOS metadata. */
function isBundleEntry(name: string): boolean {
  if (name.endsWith('/')) return false;
  const base = name.split('/').pop() ?? '';
  return base.toLowerCase().endsWith('.json') && !base.startsWith('.') && !name.startsWith('__MACOSX/');
}

/** A zip of exports holds a handful of bundles; an archive of more entries than this is not one. */
const MAX_ENTRIES = 10_000;

/**
 * Stages every JSON bundle inside a zip, one entry at a time (entries are streamed, never
 * buffered). maxUncompressed guards against zip bombs: it holds for the bytes really inflated, not
 * only for the sizes the archive declares (zip-entries.ts).
 */
export async function stageZip(file: string, stagedDir: string, maxUncompressed: number): Promise<StagedBundle> {
  const libraries: StagedLibrary[] = [];
  let force: boolean | null = null;
  let bundles = 0;
  try {
    await walkZip(file, {
      maxInflated: maxUncompressed,
      maxEntries: MAX_ENTRIES,
      accept: (entry) => isBundleEntry(entry.fileName),
      consume: async (entry, stream) => {
        const staged = await stageBundle(stream, stagedDir, `${entry.fileName}: `);
        bundles++;
        libraries.push(...staged.libraries);
        if (staged.force !== null) force = (force ?? false) || staged.force;
      },
    });
  } catch (err) {
    discardStaged(libraries);
    throw err instanceof ZipRefused ? refusal(err) : err;
  }
  if (bundles === 0) throw new ApiError('validation_error', 'The zip file holds no .json bundle.');
  return { libraries, force };
}

function refusal(err: ZipRefused): ApiError {
  if (err.kind === 'too_large')
    return new ApiError(
      'payload_too_large',
      `The zip file ${err.reason}: its bundles may unpack to at most 10 times STACKS_IMPORT_MAX_BYTES. Nothing was imported.`,
    );
  return new ApiError('validation_error', `The upload looks like a zip file but ${err.reason}. Nothing was imported.`);
}
