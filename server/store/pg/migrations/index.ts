import type { PgMigration } from './migration.ts';
import { m001 } from './001-initial.ts';
import { m002 } from './002-search.ts';
import { m003 } from './003-schedule-runs.ts';
import { m004 } from './004-rate-buckets.ts';
import { m005 } from './005-staged-files.ts';
import { m006 } from './006-section-ranges.ts';
import { m007 } from './007-term-ranges.ts';
import { m008 } from './008-count-requests.ts';

export type { PgMigration };

/** PostgreSQL's own numbering (not SQLite's). Append new migrations here; never edit one that has shipped. */
export const pgMigrations: PgMigration[] = [m001, m002, m003, m004, m005, m006, m007, m008];
