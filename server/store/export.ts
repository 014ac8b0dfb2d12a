import type { Db } from './db.ts';
import type { Library, LibraryVersion } from '../../lib/model.ts';
import { openSqlite } from '../../lib/sqlite.ts';
import { toLibrary } from './libraries.ts';
import type { Awaitable } from './version-reads.ts';

/** A stored snippet as an export writes it (the bundle's fields, nothing derived). */
export interface ExportRow {
  id: number;
  kind: 'code' | 'info';
  sourceId: string;
  title: string;
  description: string;
  language: string;
  pageTitle: string;
  breadcrumb: string;
  content: string;
  codeList: string | null;
  tokens: number;
  isDynamic: number;
  sourceFile: string | null;
}

/** A served version as an export lists it. */
export type ExportVersion = Pick<LibraryVersion, 'id' | 'tag' | 'totalSnippets' | 'totalTokens'>;

/**
 * What an export reads, from one read snapshot held until close(): SQLite's (ExportSnapshot,
 * answering at once) or PostgreSQL's (pg/export.ts, answering with promises).
 */
export interface ExportReads {
  library(id: string): Awaitable<Library | null>;
  /** The served versions of a library (current documentation and tags), in tag order (byte order, as SQLite compares text). */
  servedVersions(libraryId: string): Awaitable<ExportVersion[]>;
  snippets(versionId: number, kind: 'code' | 'info', afterId: number, limit: number): Awaitable<ExportRow[]>;
  /** Ends the snapshot; a second call does nothing. */
  close(): Awaitable<void>;
}

/**
 * One read snapshot of the database for an export: its own read-only connection holding one read
 * transaction from the first query to close(), so a library swapped in or deleted meanwhile is
 * exported whole as it was (the server's shared connection cannot hold a transaction that long).
 */
export class ExportSnapshot implements ExportReads {
  private readonly db: Db;

  constructor(file: string) {
    this.db = openSqlite(file, { readonly: true, fileMustExist: true });
    this.db.pragma('busy_timeout = 10000');
    this.db.exec('BEGIN');
  }

  library(id: string): Library | null {
    const r = this.db
      .prepare('SELECT l.*, (SELECT group_concat(g.teamspace_id) FROM library_grants g WHERE g.library_id = l.id) AS grants FROM libraries l WHERE l.id = ?')
      .get(id) as Parameters<typeof toLibrary>[0] | undefined;
    return r ? toLibrary(r) : null;
  }

  servedVersions(libraryId: string): ExportVersion[] {
    return this.db
      .prepare(
        "SELECT id, tag, total_snippets AS totalSnippets, total_tokens AS totalTokens FROM library_versions WHERE library_id = ? AND is_current = 1 AND state = 'ready' ORDER BY tag",
      )
      .all(libraryId) as ExportVersion[];
  }

  snippets(versionId: number, kind: 'code' | 'info', afterId: number, limit: number): ExportRow[] {
    return this.db
      .prepare(
        `SELECT id, kind, source_id AS sourceId, title, description, language, page_title AS pageTitle, breadcrumb, content, code_list_json AS codeList,
           tokens, is_dynamic AS isDynamic, source_file AS sourceFile
         FROM snippets WHERE version_id = ? AND kind = ? AND id > ? ORDER BY id LIMIT ?`,
      )
      .all(versionId, kind, afterId, limit) as ExportRow[];
  }

  close(): void {
    if (!this.db.open) return;
    this.db.exec('ROLLBACK');
    this.db.close();
  }
}
