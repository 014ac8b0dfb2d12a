import fs from 'node:fs';
import yauzl from 'yauzl';

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
    const entries = await zipEntryNames(file).catch((err: Error) => err);
    if (entries instanceof Error) return { kind: null, reason: `a damaged ZIP archive (${entries.message})` };
    // A small DOCX that expands to gigabytes would exhaust memory in the converter.
    if (entries.expanded > MAX_EXPANDED_BYTES) return { kind: null, reason: `a ZIP archive that expands to ${Math.round(entries.expanded / 1024 / 1024)} MB (limit ${MAX_EXPANDED_BYTES / 1024 / 1024} MB)` };
    if (entries.names.has('word/document.xml')) return { kind: 'docx' };
    return { kind: null, reason: 'a ZIP archive without word/document.xml (not a Word document)' };
  }
  return { kind: null, reason: 'neither a PDF (no %PDF- header) nor a DOCX (not a ZIP archive)' };
}

const MAX_EXPANDED_BYTES = 512 * 1024 * 1024;

function zipEntryNames(file: string): Promise<{ names: Set<string>; expanded: number }> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true, autoClose: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error('cannot open'));
      const names = new Set<string>();
      let expanded = 0;
      zip.on('entry', (e: yauzl.Entry) => {
        names.add(e.fileName);
        expanded += e.uncompressedSize;
        if (names.size > 10_000) {
          zip.close();
          return resolve({ names, expanded });
        }
        zip.readEntry();
      });
      zip.on('end', () => resolve({ names, expanded }));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}
