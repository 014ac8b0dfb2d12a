import { ApiError } from '../../lib/errors.ts';
import { parseLibraryId, type Library, type Reader } from '../../lib/model.ts';
import type { AccessPolicy } from '../search/answer-types.ts';
import type { ExportReads, ExportRow, ExportVersion } from '../store/export.ts';

/** One library version in an export. */
export interface ExportedVersion {
  libraryId: string;
  tag: string;
  snippets: number;
}

/** An export ready to stream: what it holds, and its JSON text in chunks. */
export interface ExportPlan {
  libraries: ExportedVersion[];
  chunks(): AsyncGenerator<string>;
}

const PAGE = 1000;

/**
 * Writes libraries in the import bundle format (`{"libraries": [...]}`, one entry per served
 * version, docs/import.md), so another appliance imports them with `stacks import` or
 * POST /api/import-libraries and answers the same. Every field the importer reads is written,
 * including the optional ones it understands beyond the spec (pageTitle, an info snippet's title,
 * isDynamic, sourceFile, sourceUrl), so nothing the ranking uses is lost on the way.
 * A library the reader may not read is `library_not_found`, exactly like a missing one.
 * `snapshot` opens one read snapshot of either backend (the composition root picks SQLite's
 * ExportSnapshot or PostgreSQL's PgExportSnapshot); the bundle is the same byte for byte.
 */
export class ExportService {
  constructor(private readonly d: { snapshot: () => ExportReads | Promise<ExportReads>; access: () => AccessPolicy }) {}

  /** Checks every requested library first (nothing is written for a request that fails), then returns the plan over one read snapshot. */
  async plan(reader: Reader, requested: string[]): Promise<ExportPlan> {
    const snap = await this.d.snapshot();
    try {
      const wanted = await this.resolve(snap, reader, requested);
      return {
        libraries: wanted.map((w) => ({ libraryId: w.lib.id, tag: w.version.tag, snippets: w.version.totalSnippets })),
        chunks: () => write(snap, wanted),
      };
    } catch (err) {
      await snap.close();
      throw err;
    }
  }

  private async resolve(snap: ExportReads, reader: Reader, requested: string[]): Promise<Wanted[]> {
    const out: Wanted[] = [];
    const seen = new Set<string>();
    for (const raw of requested) {
      const parsed = parseLibraryId(raw);
      if (!parsed) throw new ApiError('invalid_library_id', `"${raw}" is not a library ID (/owner/repo, optionally /owner/repo/<version>).`);
      const lib = await snap.library(parsed.id);
      if (!lib || !this.d.access().canSee(reader, lib)) throw new ApiError('library_not_found', `No library ${parsed.id}.`);
      const versions = (await snap.servedVersions(lib.id)).filter((v) => parsed.tag === null || v.tag === parsed.tag);
      if (versions.length === 0) throw new ApiError('library_not_found', `${lib.id} has no served version${parsed.tag ? ` ${parsed.tag}` : ''}.`);
      for (const version of versions) {
        const key = `${lib.id}\u0000${version.tag}`;
        if (!seen.has(key)) out.push({ lib, version });
        seen.add(key);
      }
    }
    return out;
  }
}

interface Wanted {
  lib: Library;
  version: ExportVersion;
}

/** The bundle's text, a page of snippets at a time; the snapshot closes when it ends (or the consumer stops). */
async function* write(snap: ExportReads, wanted: Wanted[]): AsyncGenerator<string> {
  try {
    yield '{"libraries":[';
    for (const [i, w] of wanted.entries()) {
      const head = JSON.stringify(header(w));
      yield `${i ? ',' : ''}${head.slice(0, -1)},"codeSnippets":[`;
      yield* rows(snap, w.version.id, 'code', codeSnippet);
      yield '],"infoSnippets":[';
      yield* rows(snap, w.version.id, 'info', infoSnippet);
      yield ']}';
    }
    yield ']}\n';
  } finally {
    await snap.close();
  }
}

async function* rows(snap: ExportReads, versionId: number, kind: 'code' | 'info', shape: (r: ExportRow) => Record<string, unknown>): AsyncGenerator<string> {
  let after = 0;
  let first = true;
  for (;;) {
    const page = await snap.snippets(versionId, kind, after, PAGE);
    if (page.length === 0) return;
    yield `${first ? '' : ','}${page.map((r) => JSON.stringify(shape(r))).join(',')}`;
    first = false;
    after = page[page.length - 1]!.id;
  }
}

/** The library fields of the bundle (the tag as `version`; totals of what is exported). */
function header({ lib, version }: Wanted): Record<string, unknown> {
  return prune({
    project: lib.id,
    version: version.tag || undefined,
    title: lib.title,
    description: lib.description,
    type: lib.sourceType,
    language: lib.language,
    branch: lib.branch,
    docsRepoUrl: lib.docsRepoUrl,
    docsSiteUrl: lib.docsSiteUrl,
    sourceUrl: lib.sourceUrl,
    totalTokens: version.totalTokens,
    trustScore: lib.trustScore,
    stars: lib.stars,
    license: lib.license,
    verified: lib.verified,
  });
}

function codeSnippet(r: ExportRow): Record<string, unknown> {
  return prune({
    id: r.sourceId,
    title: r.title,
    description: r.description,
    language: r.language,
    codeList: r.codeList ? JSON.parse(r.codeList) : [],
    tokens: r.tokens,
    pageTitle: r.pageTitle,
    breadcrumb: r.breadcrumb || undefined,
    isDynamic: r.isDynamic === 1 || undefined,
    sourceFile: r.sourceFile,
  });
}

function infoSnippet(r: ExportRow): Record<string, unknown> {
  return prune({
    id: r.sourceId,
    content: r.content,
    breadcrumb: r.breadcrumb || undefined,
    tokens: r.tokens,
    pageTitle: r.pageTitle,
    title: r.title || undefined,
  });
}

/** Leaves out absent fields (null or undefined) rather than writing nulls the importer's schema refuses. */
function prune(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined));
}
