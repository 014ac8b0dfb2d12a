import { Transform, type Readable, type TransformCallback } from 'node:stream';
import yauzl from 'yauzl';

/**
 * Why a zip archive was refused: `damaged` (unreadable, or an entry whose header lies about its
 * size: a client's error) or `too_large` (it unpacks past the budget). `reason` completes the
 * sentence "a zip archive that ...", so each caller words its own answer around it.
 */
export class ZipRefused extends Error {
  constructor(
    readonly kind: 'damaged' | 'too_large',
    readonly reason: string,
  ) {
    super(reason);
    this.name = 'ZipRefused';
  }
}

export interface ZipWalk {
  /**
   * Most bytes the accepted entries may unpack to, all together. The headers' sizes are only a first,
   * cheap check: the bytes are counted as they are inflated, and reading stops at the budget.
   */
  maxInflated: number;
  /** Most entries the archive may hold (read or not): a directory of millions of entries is refused. */
  maxEntries: number;
  /** Entries to read; the others are skipped unread. */
  accept(entry: yauzl.Entry): boolean;
  /** Reads one accepted entry's inflated bytes; it must consume the stream to its end (or fail). */
  consume(entry: yauzl.Entry, stream: Readable): Promise<void>;
}

/**
 * Walks a zip archive one entry at a time, streaming (nothing is buffered whole). yauzl checks each
 * entry's inflated length against its central directory record (validateEntrySizes, on by default)
 * and the meter here holds the total to `maxInflated`, so neither a lying header nor a deflate bomb
 * gets past the budget. Every way the archive can be bad is a ZipRefused; an error of `consume`
 * itself (a bad bundle inside, a full disk) is passed on as it is. Answers every entry's name.
 */
export async function walkZip(file: string, walk: ZipWalk): Promise<string[]> {
  let zip: yauzl.ZipFile;
  try {
    zip = await openZip(file);
  } catch (err) {
    throw new ZipRefused('damaged', `cannot be read (${clean(err)})`);
  }
  if (zip.entryCount > walk.maxEntries) {
    zip.close();
    throw new ZipRefused('too_large', `holds ${zip.entryCount} entries (at most ${walk.maxEntries})`);
  }
  const names: string[] = [];
  const budget = { declared: 0, left: walk.maxInflated, max: walk.maxInflated };
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('error', (err: Error) => reject(new ZipRefused('damaged', `is damaged (${clean(err)})`)));
      zip.on('end', () => resolve());
      zip.on('entry', (entry: yauzl.Entry) => {
        names.push(entry.fileName);
        if (!walk.accept(entry)) return zip.readEntry();
        budget.declared += entry.uncompressedSize;
        if (budget.declared > budget.max) return reject(tooLarge(budget.declared, budget.max));
        zip.openReadStream(entry, (err, stream) => {
          if (err || !stream) return reject(new ZipRefused('damaged', `is damaged (${entry.fileName}: ${err ? clean(err) : 'no data'})`));
          walk.consume(entry, metered(stream, entry, budget)).then(() => zip.readEntry(), reject);
        });
      });
      zip.readEntry();
    });
  } finally {
    // autoClose closes after the last entry; on a refusal the file descriptor is closed here.
    zip.close();
  }
  return names;
}

function openZip(file: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) =>
    yauzl.open(file, { lazyEntries: true, autoClose: true, validateEntrySizes: true }, (err, zip) =>
      err || !zip ? reject(err ?? new Error('no zip')) : resolve(zip),
    ),
  );
}

/** Declared (known) or counted (`more than`) past the budget. */
function tooLarge(bytes: number | null, max: number): ZipRefused {
  return new ZipRefused('too_large', bytes === null ? `expands to more than ${size(max)} (the limit)` : `expands to ${size(bytes)} (limit ${size(max)})`);
}

function size(n: number): string {
  return n >= 1024 * 1024 ? `${Math.round(n / 1024 / 1024)} MB` : `${Math.ceil(n / 1024)} KB`;
}

/**
 * The entry's inflated bytes through a meter: the reader sees the meter's error (a ZipRefused) when
 * the entry is damaged or the budget runs out, and inflating stops there.
 */
function metered(source: Readable, entry: yauzl.Entry, budget: { left: number; max: number }): Readable {
  const meter = new InflateMeter(budget);
  source.on('error', (err: Error) => meter.destroy(damaged(entry, err)));
  // However the reader stops (done, refused, failed), nothing more is inflated.
  meter.on('close', () => source.destroy());
  return source.pipe(meter);
}

/** Counts bytes against a budget shared by every entry of one archive. */
export class InflateMeter extends Transform {
  constructor(private readonly budget: { left: number; max: number }) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.budget.left -= chunk.length;
    if (this.budget.left < 0) return done(tooLarge(null, this.budget.max));
    done(null, chunk);
  }
}

/** yauzl's size check and zlib's errors, said as what they mean for the archive. */
function damaged(entry: yauzl.Entry, err: Error): ZipRefused {
  if (/^too many bytes in the stream/.test(err.message)) {
    return new ZipRefused('damaged', `is damaged: ${entry.fileName} unpacks to more than the ${entry.uncompressedSize} bytes its header declares`);
  }
  if (/^not enough bytes in the stream/.test(err.message)) {
    return new ZipRefused('damaged', `is damaged: ${entry.fileName} unpacks to fewer than the ${entry.uncompressedSize} bytes its header declares`);
  }
  return new ZipRefused('damaged', `is damaged (${entry.fileName}: ${clean(err)})`);
}

/** A library's message without its final period, to sit inside parentheses. */
function clean(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).replace(/\.+$/, '');
}
