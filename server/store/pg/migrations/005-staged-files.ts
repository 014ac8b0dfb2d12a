import type { PgMigration } from './migration.ts';

/**
 * The staged inputs of jobs (a bundle's staged libraries, a source's uploaded documents) where every
 * node can read them: on PostgreSQL any node may run a job, and must when the node that took the
 * upload dies. A file is its row in staged_files and its bytes in chunks of about a megabyte, written
 * and read one chunk at a time so that no node holds a whole bundle in memory. Transient data with no
 * SQLite counterpart (there the file on the one node's disk is enough): `stacks store copy` leaves it.
 * The chunks are stored uncompressed (STORAGE EXTERNAL): they live minutes, and compressing megabytes
 * of text on every upload would cost the database more CPU than their space is worth.
 */
export const m005: PgMigration = {
  version: 5,
  name: 'staged-files',
  sql: `
    CREATE TABLE staged_files (
      id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      name TEXT NOT NULL UNIQUE,
      size BIGINT NOT NULL,
      chunks INTEGER NOT NULL,
      created_at TEXT NOT NULL
    );
    CREATE INDEX staged_files_created ON staged_files (created_at);
    CREATE TABLE staged_file_chunks (
      file_id BIGINT NOT NULL REFERENCES staged_files(id) ON DELETE CASCADE,
      seq INTEGER NOT NULL,
      data BYTEA NOT NULL,
      PRIMARY KEY (file_id, seq)
    );
    ALTER TABLE staged_file_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
  `,
};
