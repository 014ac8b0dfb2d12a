import type { Db } from './db.ts';
import type Database from 'better-sqlite3';
import type { CodeExample, StoredSnippet } from '../../lib/model.ts';
import { int8Unit } from '../../lib/vector/quantize.ts';
import { blobOf, f32Of } from './blobs.ts';

/** A snippet row ready to insert, with the texts of its full-text columns already prepared. */
export interface SnippetRow {
  kind: 'code' | 'info';
  sourceId: string;
  title: string;
  description: string;
  language: string;
  pageTitle: string;
  breadcrumb: string;
  content: string;
  codeList: CodeExample[] | null;
  tokens: number;
  contentHash: string;
  position: number;
  isDynamic: boolean;
  sourceFile: string | null;
  fts: { title: string; breadcrumb: string; description: string; code: string; content: string };
  vector: Float32Array | null;
}

export interface Row {
  id: number;
  version_id: number;
  kind: 'code' | 'info';
  source_id: string;
  title: string;
  description: string;
  language: string;
  page_title: string;
  breadcrumb: string;
  content: string;
  code_list_json: string | null;
  tokens: number;
  content_hash: string;
  position: number;
  is_dynamic: number;
  source_file: string | null;
}

/** The columns a StoredSnippet is read from (not the embedding copy: only the reranker reads it, by embeddings()). */
export const COLUMNS =
  'id, version_id, kind, source_id, title, description, language, page_title, breadcrumb, content, code_list_json, tokens, content_hash, position, is_dynamic, source_file';

/** A stored code list (JSON written by this store); none for prose. */
export function codeListOf(json: string | null): CodeExample[] {
  return json ? (JSON.parse(json) as CodeExample[]) : [];
}

/** A row of installTexts as shown: a code snippet's code joined, a prose snippet's text as it is (both backends). */
export function installTextOf(r: { id: number; kind: 'code' | 'info'; text: string }): { id: number; kind: 'code' | 'info'; text: string } {
  return r.kind === 'code'
    ? {
        ...r,
        text: codeListOf(r.text)
          .map((c) => c.code)
          .join('\n'),
      }
    : r;
}

export function toSnippet(r: Row): StoredSnippet {
  return {
    id: r.id,
    versionId: r.version_id,
    kind: r.kind,
    sourceId: r.source_id,
    title: r.title,
    description: r.description,
    language: r.language,
    pageTitle: r.page_title,
    breadcrumb: r.breadcrumb,
    content: r.content,
    codeList: codeListOf(r.code_list_json),
    tokens: r.tokens,
    contentHash: r.content_hash,
    position: r.position,
    isDynamic: r.is_dynamic === 1,
    sourceFile: r.source_file,
  };
}

/** A row read with its float embedding. */
export function toEmbedded(r: Row & { embedding: Buffer }): { snippet: StoredSnippet; embedding: Float32Array } {
  return { snippet: toSnippet(r), embedding: f32Of(r.embedding) };
}

export function ftsScope(versionId: number): string {
  return `v${versionId}`;
}

/** Snippet rows with their full-text and vector index entries. */
export class SnippetStore {
  /** byIds statements by number of ids: retrieval loads 20-80 candidates per answer, and preparing each time showed in profiles. */
  private readonly byIdsStmts = new Map<number, Database.Statement<unknown[], unknown>>();

  constructor(private readonly db: Db) {}

  private readonly withEmbeddingsStmts = new Map<number, Database.Statement<unknown[], unknown>>();
  private readonly embeddedAtStmts = new Map<number, Database.Statement<unknown[], unknown>>();

  /** `<sql> (?, ?, ...)` with n placeholders, prepared once per n up to 200 (longer lists are prepared each time). */
  private inStmt(cache: Map<number, Database.Statement<unknown[], unknown>>, sql: string, n: number): Database.Statement<unknown[], unknown> {
    let st = cache.get(n);
    if (!st) {
      st = this.db.prepare(`${sql} (${Array.from({ length: n }, () => '?').join(',')})`);
      if (n <= 200) cache.set(n, st);
    }
    return st;
  }

  /** Inserts a batch in one transaction; returns the new rows' ids in order. */
  async insertBatch(versionId: number, rows: SnippetRow[], vectorTable: string | null, opts: { fts?: boolean } = {}): Promise<number[]> {
    const ins = this.db.prepare(
      `INSERT INTO snippets (version_id, kind, source_id, title, description, language, page_title, breadcrumb, content, code_list_json,
         tokens, content_hash, position, is_dynamic, source_file, embedding)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const fts =
      opts.fts === false
        ? null
        : this.db.prepare('INSERT INTO snippet_fts (rowid, scope, title, breadcrumb, description, code, content) VALUES (?, ?, ?, ?, ?, ?, ?)');
    const vec = vectorTable ? this.db.prepare(`INSERT INTO ${vectorTable} (rowid, version_id, embedding) VALUES (?, ?, vec_int8(?))`) : null;
    const scope = ftsScope(versionId);
    const ids: number[] = [];
    this.db.transaction(() => {
      for (const r of rows) {
        const info = ins.run(
          versionId,
          r.kind,
          r.sourceId,
          r.title,
          r.description,
          r.language,
          r.pageTitle,
          r.breadcrumb,
          r.content,
          r.codeList ? JSON.stringify(r.codeList) : null,
          r.tokens,
          r.contentHash,
          r.position,
          r.isDynamic ? 1 : 0,
          r.sourceFile,
          r.vector ? blobOf(r.vector) : null,
        );
        const id = info.lastInsertRowid;
        fts?.run(id, scope, r.fts.title, r.fts.breadcrumb, r.fts.description, r.fts.code, r.fts.content);
        if (vec && r.vector) vec.run(BigInt(id), BigInt(versionId), int8Unit(r.vector));
        ids.push(Number(id));
      }
    })();
    return ids;
  }

  /** Replaces the full-text rows of stored snippets (when what is indexed of a snippet changed: migration 010). */
  async rewriteFts(versionId: number, rows: { id: number; fts: SnippetRow['fts'] }[]): Promise<void> {
    const del = this.db.prepare('DELETE FROM snippet_fts WHERE rowid = ?');
    const ins = this.db.prepare('INSERT INTO snippet_fts (rowid, scope, title, breadcrumb, description, code, content) VALUES (?, ?, ?, ?, ?, ?, ?)');
    const scope = ftsScope(versionId);
    this.db.transaction(() => {
      for (const r of rows) {
        del.run(r.id);
        ins.run(r.id, scope, r.fts.title, r.fts.breadcrumb, r.fts.description, r.fts.code, r.fts.content);
      }
    })();
  }

  /** Content hashes already stored in a version (to skip exact duplicates when a build resumes). */
  async hashes(versionId: number): Promise<Set<string>> {
    const rows = this.db.prepare('SELECT kind, content_hash FROM snippets WHERE version_id = ?').all(versionId) as { kind: string; content_hash: string }[];
    return new Set(rows.map((r) => `${r.kind}:${r.content_hash}`));
  }

  async totals(versionId: number): Promise<{ tokens: number; snippets: number; maxPosition: number }> {
    const r = this.db
      .prepare('SELECT coalesce(sum(tokens), 0) AS tokens, count(*) AS snippets, coalesce(max(position), -1) AS maxPosition FROM snippets WHERE version_id = ?')
      .get(versionId) as { tokens: number; snippets: number; maxPosition: number };
    return r;
  }

  /** Snippets and their embeddings in one query (the reranker needs both of every candidate). */
  withEmbeddings(ids: number[]): { snippets: Map<number, StoredSnippet>; embeddings: Map<number, Float32Array> } {
    const snippets = new Map<number, StoredSnippet>();
    const embeddings = new Map<number, Float32Array>();
    if (ids.length === 0) return { snippets, embeddings };
    const rows = this.inStmt(this.withEmbeddingsStmts, `SELECT ${COLUMNS}, embedding FROM snippets WHERE id IN`, ids.length).all(...ids) as (Row & {
      embedding: Buffer | null;
    })[];
    for (const r of rows) {
      snippets.set(r.id, toSnippet(r));
      if (r.embedding) embeddings.set(r.id, f32Of(r.embedding));
    }
    return { snippets, embeddings };
  }

  /** A version's embedded snippets at these source URLs, with their float embeddings (a rebuild reuses the vectors of unchanged text). */
  async embeddedAt(versionId: number, sourceIds: string[]): Promise<{ snippet: StoredSnippet; embedding: Float32Array }[]> {
    const urls = [...new Set(sourceIds)];
    if (urls.length === 0) return [];
    const rows = this.inStmt(
      this.embeddedAtStmts,
      `SELECT ${COLUMNS}, embedding FROM snippets WHERE version_id = ? AND embedding IS NOT NULL AND source_id IN`,
      urls.length,
    ).all(versionId, ...urls);
    return (rows as (Row & { embedding: Buffer })[]).map(toEmbedded);
  }

  /** Every embedded snippet, a page at a time in id order (a vector cache is written from them). */
  async embeddedPage(afterId: number, limit: number): Promise<{ snippet: StoredSnippet; embedding: Float32Array }[]> {
    const rows = this.db.prepare(`SELECT ${COLUMNS}, embedding FROM snippets WHERE id > ? AND embedding IS NOT NULL ORDER BY id LIMIT ?`).all(afterId, limit);
    return (rows as (Row & { embedding: Buffer })[]).map(toEmbedded);
  }

  byIds(ids: number[]): StoredSnippet[] {
    if (ids.length === 0) return [];
    const rows = this.inStmt(this.byIdsStmts, `SELECT ${COLUMNS} FROM snippets WHERE id IN`, ids.length).all(...ids) as Row[];
    const byId = new Map(rows.map((r) => [r.id, toSnippet(r)]));
    return ids.map((id) => byId.get(id)).filter((s): s is StoredSnippet => s !== undefined);
  }

  /** What the ranking model learns from (server/search/learn.ts): each snippet's source URL, kind and headings, in id order, a page at a time. */
  headings(versionId: number, afterId: number, limit: number): { id: number; sourceId: string; kind: 'code' | 'info'; title: string; breadcrumb: string }[] {
    return this.db
      .prepare('SELECT id, source_id AS sourceId, kind, title, breadcrumb FROM snippets WHERE version_id = ? AND id > ? ORDER BY id LIMIT ?')
      .all(versionId, afterId, limit) as { id: number; sourceId: string; kind: 'code' | 'info'; title: string; breadcrumb: string }[];
  }

  /**
   * The texts of a version that may hold an install command (server/search/package-names.ts), in
   * id order, a page at a time: a code snippet's code, a prose snippet's content.
   */
  installTexts(versionId: number, afterId: number, limit: number): { id: number; kind: 'code' | 'info'; text: string }[] {
    const rows = this.db
      .prepare(
        `SELECT id, kind, text FROM (SELECT id, kind, CASE kind WHEN 'code' THEN code_list_json ELSE content END AS text FROM snippets WHERE version_id = ? AND id > ?)
         WHERE text LIKE '%npm %' OR text LIKE '%yarn %' OR text LIKE '%bun %' OR text LIKE '%deno add%' ORDER BY id LIMIT ?`,
      )
      .all(versionId, afterId, limit) as { id: number; kind: 'code' | 'info'; text: string }[];
    return rows.map(installTextOf);
  }

  /** Every snippet of a version with its embedding, in id order (a git refresh copies those of unchanged files). */
  allWithEmbeddings(versionId: number): { snippet: StoredSnippet; embedding: Float32Array | null }[] {
    const rows = this.db.prepare(`SELECT ${COLUMNS}, embedding FROM snippets WHERE version_id = ? ORDER BY id`).all(versionId) as (Row & {
      embedding: Buffer | null;
    })[];
    return rows.map((r) => ({ snippet: toSnippet(r), embedding: r.embedding ? f32Of(r.embedding) : null }));
  }

  /** Snippets of a version in id order, `limit` after `afterId` (paging for exports and tests). */
  async list(versionId: number, limit: number, afterId = 0): Promise<StoredSnippet[]> {
    return (this.db.prepare(`SELECT ${COLUMNS} FROM snippets WHERE version_id = ? AND id > ? ORDER BY id LIMIT ?`).all(versionId, afterId, limit) as Row[]).map(
      toSnippet,
    );
  }

  async countByKind(versionId: number): Promise<{ code: number; info: number }> {
    const rows = this.db.prepare('SELECT kind, count(*) AS n FROM snippets WHERE version_id = ? GROUP BY kind').all(versionId) as {
      kind: 'code' | 'info';
      n: number;
    }[];
    const out = { code: 0, info: 0 };
    for (const r of rows) out[r.kind] = r.n;
    return out;
  }
}
