import fs from 'node:fs';
import { finished } from 'node:stream/promises';
import { walkZip, ZipRefused } from '../ingest/zip-entries.ts';

/** Document type by content, never by file name: %PDF- magic, or a ZIP holding word/document.xml. */
export type DocumentKind = 'pdf' | 'docx';

export async function sniffDocument(file: string): Promise<{ kind: DocumentKind } | { kind: null; reason: string }> {
  const fd = await fs.promises.open(file, 'r');
  let head: Buffer;
  try {
    const buf = Buffer.alloc(1024);
    const { bytesRead } = await fd.read(buf, 0, 1024, 0);
    head = buf.subarray(0, bytesRead);
  } finally {
    await fd.close();
  }
  if (head.length === 0) return { kind: null, reason: 'the file is empty' };
  // PDF readers accept the header anywhere in the first 1024 bytes.
  if (head.indexOf('%PDF-') !== -1) return { kind: 'pdf' };
  if (head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04) {
    const names = await zipEntryNames(file);
    if (names instanceof ZipRefused) return { kind: null, reason: `a ZIP archive that ${names.reason}` };
    if (names.has('word/document.xml')) return { kind: 'docx' };
    return { kind: null, reason: 'a ZIP archive without word/document.xml (not a Word document)' };
  }
  return { kind: null, reason: 'neither a PDF (no %PDF- header) nor a DOCX (not a ZIP archive)' };
}

/** A DOCX is unpacked whole in memory by the converter: what it expands to is held to this. */
const MAX_EXPANDED_BYTES = 512 * 1024 * 1024;
const MAX_ENTRIES = 10_000;

/**
 * The entry names of a ZIP archive, once every entry has been inflated and counted: a small DOCX
 * whose headers under-declare its sizes would otherwise reach the converter and exhaust memory.
 * Inflating runs on libuv's thread pool, a few milliseconds for a real document.
 */
async function zipEntryNames(file: string): Promise<Set<string> | ZipRefused> {
  try {
    const names = await walkZip(file, {
      maxInflated: MAX_EXPANDED_BYTES,
      maxEntries: MAX_ENTRIES,
      accept: (entry) => !entry.fileName.endsWith('/'),
      consume: (_entry, stream) => finished(stream.resume()),
    });
    return new Set(names);
  } catch (err) {
    if (err instanceof ZipRefused) return err;
    throw err;
  }
}
