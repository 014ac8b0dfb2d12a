import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import type { z } from 'zod';
import { jsonParser, type Token } from 'stream-json/core/parser.js';
import { ApiError } from '../../lib/errors.ts';
import { bundleCodeSnippetSchema, bundleHeaderSchema, bundleInfoSnippetSchema, bundleTarget, REQUIRED_LIBRARY_FIELDS, type BundleHeader } from './bundle.ts';

/**
 * Streaming reader of import bundles. A bundle is `{"libraries": [...], "force"?: bool}`, a bare
 * array of libraries, or one library object. Tokens are consumed one at a time: library header
 * fields are kept, every snippet is assembled alone, validated and appended to the library's
 * staged NDJSON file, so memory stays flat whatever the bundle size.
 */

/** One validated library whose snippets wait in a staged file for the import job. */
export interface StagedLibrary {
  /** Where the library was in the upload, for messages: `libraries[1]` or `bundles/a.json: libraries[0]`. */
  label: string;
  /** `project` as written in the bundle. */
  project: string;
  header: BundleHeader;
  libraryId: string;
  tag: string;
  /** Absolute path of the staged NDJSON file (one line per snippet: `c` or `i`, then the JSON). */
  file: string;
  snippets: number;
}

export interface StagedBundle {
  libraries: StagedLibrary[];
  /** The bundle's own top-level `force` field, when present. */
  force: boolean | null;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Builds one JSON value from tokens (our own, so we control memory and error text). */
class ValueAssembler {
  private stack: (Json[] | { [key: string]: Json })[] = [];
  private keys: (string | null)[] = [];
  value: Json | undefined = undefined;
  done = false;

  /** Returns true when the value is complete. */
  push(t: Token): boolean {
    switch (t.name) {
      case 'startObject':
        this.open({});
        return false;
      case 'startArray':
        this.open([]);
        return false;
      case 'endObject':
      case 'endArray': {
        const v = this.stack.pop()!;
        this.keys.pop();
        return this.add(v);
      }
      case 'keyValue':
        this.keys[this.keys.length - 1] = t.value;
        return false;
      case 'stringValue':
        return this.add(t.value);
      case 'numberValue':
        return this.add(Number(t.value));
      case 'nullValue':
        return this.add(null);
      case 'trueValue':
        return this.add(true);
      case 'falseValue':
        return this.add(false);
      default:
        return false;
    }
  }

  private open(c: Json[] | { [key: string]: Json }): void {
    this.stack.push(c);
    this.keys.push(null);
  }

  private add(v: Json): boolean {
    const top = this.stack[this.stack.length - 1];
    if (!top) {
      this.value = v;
      this.done = true;
      return true;
    }
    if (Array.isArray(top)) top.push(v);
    else top[this.keys[this.keys.length - 1] ?? ''] = v;
    return false;
  }
}

/** Buffered append-only writer for one staged file; the caller awaits drain() between input chunks. */
class StagedFile {
  private stream: fs.WriteStream | null = null;
  private parts: string[] = [];
  private size = 0;
  private pendingDrain: Promise<void> | null = null;
  lines = 0;

  constructor(readonly file: string) {}

  /** Opens synchronously (and lazily), so that destroy() followed by unlink never races a pending open. */
  private open(): fs.WriteStream {
    if (!this.stream) {
      this.stream = fs.createWriteStream(this.file, { fd: fs.openSync(this.file, 'w') });
      this.stream.on('error', () => {});
    }
    return this.stream;
  }

  write(line: string): void {
    this.parts.push(line);
    this.size += line.length;
    this.lines++;
    if (this.size > 1 << 20) this.flush();
  }

  private flush(): void {
    if (this.parts.length === 0) return;
    const stream = this.open();
    const ok = stream.write(this.parts.join(''));
    this.parts = [];
    this.size = 0;
    if (!ok && !this.pendingDrain) this.pendingDrain = new Promise((resolve) => stream.once('drain', () => ((this.pendingDrain = null), resolve())));
  }

  async drain(): Promise<void> {
    if (this.pendingDrain) await this.pendingDrain;
  }

  async close(): Promise<void> {
    this.flush();
    const stream = this.open();
    await new Promise<void>((resolve, reject) => {
      stream.once('error', reject);
      stream.end(() => resolve());
    });
  }

  destroy(): void {
    this.parts = [];
    this.stream?.destroy();
  }
}

const SNIPPET_ARRAYS = { codeSnippets: 'c', infoSnippets: 'i' } as const;
type SnippetArray = keyof typeof SNIPPET_ARRAYS;

/** Collects one library object: header fields by key, snippets streamed to its staged file. */
class LibraryCollector {
  readonly fields: Record<string, Json> = {};
  readonly seenArrays = new Set<SnippetArray>();
  readonly out: StagedFile;
  /** Set when the object turned out to be the bundle wrapper (`{libraries: [...]}`), not a library. */
  isWrapper = false;

  constructor(
    public label: string,
    stagedDir: string,
  ) {
    this.out = new StagedFile(path.join(stagedDir, `${Date.now().toString(36)}-${crypto.randomBytes(6).toString('hex')}.ndjson`));
  }

  where(): string {
    const p = this.fields.project;
    return typeof p === 'string' && p ? `${this.label} (${p})` : this.label;
  }

  addSnippet(array: SnippetArray, index: number, value: Json): void {
    const schema = array === 'codeSnippets' ? bundleCodeSnippetSchema : bundleInfoSnippetSchema;
    const r = (schema as z.ZodType).safeParse(value);
    if (!r.success) throw invalid(`${this.where()}: ${array}[${index}]`, r.error.issues[0]!);
    this.out.write(`${SNIPPET_ARRAYS[array]}${JSON.stringify(r.data)}\n`);
  }

  /** Validates the header once the object is complete. */
  finish(): { header: BundleHeader; libraryId: string; tag: string } {
    for (const f of REQUIRED_LIBRARY_FIELDS) {
      const present = f === 'codeSnippets' || f === 'infoSnippets' ? this.seenArrays.has(f) : this.fields[f] !== undefined && this.fields[f] !== null;
      if (!present) throw new ApiError('validation_error', `${this.where()}: missing required field "${f}"`);
    }
    const r = bundleHeaderSchema.safeParse(this.fields);
    if (!r.success) throw invalid(this.where(), r.error.issues[0]!);
    const target = bundleTarget(r.data);
    if (!target) {
      throw new ApiError(
        'validation_error',
        `${this.where()}: field "project" must be a library ID like /owner/repo, /owner/repo/v1.2.3 or /owner/repo@v1.2.3`,
      );
    }
    return { header: r.data, libraryId: target.id, tag: target.tag };
  }
}

function invalid(where: string, issue: z.core.$ZodIssue): ApiError {
  const field = issue.path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('');
  if (issue.code === 'invalid_type' && issue.input === undefined) return new ApiError('validation_error', `${where}: missing required field "${field}"`);
  return new ApiError('validation_error', `${where}: field "${field || 'value'}": ${issue.message}`);
}

type Frame =
  | { kind: 'root' }
  | { kind: 'object'; lib: LibraryCollector; key: string | null; top: boolean }
  | { kind: 'libraries'; index: number }
  | { kind: 'snippets'; lib: LibraryCollector; array: SnippetArray; index: number }
  | { kind: 'value'; asm: ValueAssembler; deliver: (v: Json) => void };

/** The token state machine; see the module comment for the accepted shapes. */
class BundleReader {
  private frames: Frame[] = [{ kind: 'root' }];
  readonly done: StagedLibrary[] = [];
  readonly open = new Set<LibraryCollector>();
  private closing: Promise<void>[] = [];
  force: boolean | null = null;
  private sawLibraries = false;

  constructor(
    private readonly prefix: string,
    private readonly stagedDir: string,
  ) {}

  private newLibrary(label: string): LibraryCollector {
    const lib = new LibraryCollector(`${this.prefix}${label}`, this.stagedDir);
    this.open.add(lib);
    return lib;
  }

  private get top(): Frame {
    return this.frames[this.frames.length - 1]!;
  }

  /** Starts a generic value whose completed form goes to deliver(). */
  private value(t: Token, deliver: (v: Json) => void): void {
    const asm = new ValueAssembler();
    if (asm.push(t)) deliver(asm.value!);
    else this.frames.push({ kind: 'value', asm, deliver });
  }

  push(t: Token): void {
    const f = this.top;
    switch (f.kind) {
      case 'value':
        if (f.asm.push(t)) {
          this.frames.pop();
          f.deliver(f.asm.value!);
        }
        return;
      case 'root':
        if (t.name === 'startObject') this.frames.push({ kind: 'object', lib: this.newLibrary('library'), key: null, top: true });
        else if (t.name === 'startArray') {
          this.sawLibraries = true;
          this.frames.push({ kind: 'libraries', index: 0 });
        } else throw new ApiError('validation_error', `${this.prefix || 'body'}: the bundle must be a JSON object {"libraries": [...]} or one library object`);
        return;
      case 'libraries':
        if (t.name === 'endArray') {
          this.frames.pop();
          return;
        }
        if (t.name !== 'startObject') throw new ApiError('validation_error', `${this.prefix}libraries[${f.index}]: must be an object`);
        this.frames.push({ kind: 'object', lib: this.newLibrary(`libraries[${f.index}]`), key: null, top: false });
        f.index++;
        return;
      case 'snippets':
        if (t.name === 'endArray') {
          this.frames.pop();
          return;
        }
        {
          const index = f.index++;
          this.value(t, (v) => f.lib.addSnippet(f.array, index, v));
        }
        return;
      case 'object':
        this.inObject(f, t);
        return;
    }
  }

  private inObject(f: Extract<Frame, { kind: 'object' }>, t: Token): void {
    if (t.name === 'keyValue') {
      f.key = t.value;
      return;
    }
    if (t.name === 'endObject') {
      this.frames.pop();
      this.closeLibrary(f.lib);
      return;
    }
    const key = f.key ?? '';
    if (f.top && key === 'libraries') {
      if (t.name !== 'startArray') throw new ApiError('validation_error', `${this.prefix}field "libraries" must be an array`);
      f.lib.isWrapper = true;
      this.sawLibraries = true;
      this.frames.push({ kind: 'libraries', index: 0 });
      return;
    }
    if (key === 'codeSnippets' || key === 'infoSnippets') {
      if (t.name !== 'startArray') throw new ApiError('validation_error', `${f.lib.where()}: field "${key}" must be an array`);
      f.lib.seenArrays.add(key);
      this.frames.push({ kind: 'snippets', lib: f.lib, array: key, index: 0 });
      return;
    }
    this.value(t, (v) => {
      f.lib.fields[key] = v;
      if (f.top && key === 'force' && typeof v === 'boolean') this.force = v;
    });
  }

  private closeLibrary(lib: LibraryCollector): void {
    if (lib.isWrapper) {
      // The wrapper object is not a library; a wrapper that also carries snippets is ambiguous.
      if (lib.seenArrays.size > 0)
        throw new ApiError('validation_error', `${this.prefix}body: a bundle has either "libraries" or one library's fields, not both`);
      this.open.delete(lib);
      lib.out.destroy();
      fs.rmSync(lib.out.file, { force: true });
      return;
    }
    const { header, libraryId, tag } = lib.finish();
    this.done.push({ label: lib.label, project: header.project, header, libraryId, tag, file: lib.out.file, snippets: lib.out.lines });
    // Close finished libraries right away so that a bundle of many libraries holds few open files.
    this.open.delete(lib);
    const closing = lib.out.close();
    closing.catch(() => {});
    this.closing.push(closing);
  }

  async drain(): Promise<void> {
    for (const lib of this.open) await lib.out.drain();
    const closing = this.closing.splice(0);
    await Promise.all(closing);
  }

  async end(): Promise<void> {
    if (this.frames.length !== 1) throw new ApiError('validation_error', `${this.prefix || 'body'}: the JSON ends early (truncated upload?)`);
    if (this.sawLibraries && this.done.length === 0) throw new ApiError('validation_error', `${this.prefix}field "libraries" holds no library`);
    await this.drain();
  }

  discard(): void {
    for (const lib of this.open) {
      lib.out.destroy();
      fs.rmSync(lib.out.file, { force: true });
    }
  }
}

/**
 * Reads one bundle from a byte stream, staging each library's snippets under stagedDir.
 * On any error every file it created is removed and the error (a 400 validation_error for bad
 * input) is thrown. `prefix` names the bundle in messages (e.g. the zip entry).
 */
export async function stageBundle(input: Readable, stagedDir: string, prefix = ''): Promise<StagedBundle> {
  fs.mkdirSync(stagedDir, { recursive: true });
  const reader = new BundleReader(prefix, stagedDir);
  const parse = jsonParser({ packValues: true, streamValues: false });
  const decoder = new StringDecoder('utf8');
  let first = true;
  const feed = (text: string) => {
    let out: unknown;
    try {
      out = parse(text);
    } catch (err) {
      throw new ApiError('validation_error', `${prefix || 'body'}: not valid JSON (${(err as Error).message})`);
    }
    // The tokenizer returns a Many ({values}) wrapper, a single token, or a 'none' symbol.
    if (out === null || typeof out !== 'object') return;
    const tokens = (out as { values?: Token[] }).values ?? [out as Token];
    for (const t of tokens) reader.push(t);
  };
  try {
    for await (const chunk of input) {
      let text = typeof chunk === 'string' ? chunk : decoder.write(chunk as Buffer);
      if (first && text.length > 0) {
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
        first = false;
      }
      feed(text);
      await reader.drain();
    }
    // A trailing newline lets the tokenizer finish its last lexeme; an unfinished document is caught by end().
    feed(`${decoder.end()}\n`);
    if (first) throw new ApiError('validation_error', `${prefix || 'body'}: the bundle is empty`);
    await reader.end();
    return { libraries: reader.done, force: reader.force };
  } catch (err) {
    reader.discard();
    for (const l of reader.done) fs.rmSync(l.file, { force: true });
    throw err;
  }
}

/** Removes the staged files of libraries that will not be imported. */
export function discardStaged(libraries: StagedLibrary[]): void {
  for (const l of libraries) fs.rmSync(l.file, { force: true });
}
