import { z } from 'zod';
import { ADMINS, defineLocalOperation, defineOperation } from './operation.ts';

/** Backups of the whole instance (an owner or admin of the default teamspace, which administers it): POST /api/backup, GET /api/backups[/{name}], `stacks backup`. */

const backupResult = z.object({
  file: z.string().describe('the archive on the server'),
  bytes: z.number().int(),
  createdAt: z.string(),
  schemaVersion: z.number().int(),
  libraries: z.number().int(),
  snippets: z.number().int(),
  activeJobs: z.number().int().describe('jobs queued or running at the snapshot: they run again after a restore'),
});

export const backupCreateOperation = defineOperation({
  id: 'backupCreate',
  summary:
    'Write a backup archive (.tar.gz: both databases, the staged uploads, the license and sources.yaml, a manifest with checksums) into the backup folder',
  input: z.object({}),
  access: { caller: 'key', roles: ADMINS },
  http: { method: 'post', path: '/api/backup', from: 'body', status: 200, response: backupResult },
  errors: ['invalid_api_key', 'forbidden', 'conflict'],
});

export const backupsListOperation = defineOperation({
  id: 'backupsList',
  summary: 'The archives in the backup folder, newest first',
  input: z.object({}),
  access: { caller: 'key', roles: ADMINS },
  http: {
    method: 'get',
    path: '/api/backups',
    from: 'query',
    status: 200,
    response: z.object({
      directory: z.string(),
      backups: z.array(z.object({ name: z.string(), bytes: z.number().int(), modifiedAt: z.string(), scheduled: z.boolean() })),
    }),
  },
  errors: ['invalid_api_key', 'forbidden'],
});

export const backupDownloadOperation = defineOperation({
  id: 'backupDownload',
  summary: 'Download one archive of the backup folder (application/gzip)',
  input: z.object({ name: z.string().min(1).max(200) }),
  access: { caller: 'key', roles: ADMINS },
  http: { method: 'get', path: '/api/backups/{name}', from: 'path', status: 200, response: null },
  errors: ['invalid_api_key', 'forbidden', 'not_found'],
  audit: true,
});

// ---- The operator on the box (`stacks backup|restore`): no HTTP binding. ----

/** `stacks backup [--out DIR]`: in one step (no request waits), into any folder of the box. */
export const backupWriteOperation = defineLocalOperation({
  id: 'backupCreate',
  summary: 'Write a backup archive, into `out` or the backup folder',
  input: z.object({ out: z.string().min(1).max(4096).optional() }).strict(),
  access: { caller: 'local' },
  audit: true,
});

/**
 * `stacks restore ARCHIVE --yes` replaces the data dir before anything opens it (restoreBackup in
 * server/operations/backup.ts); this records the restore in the restored data dir's audit log.
 */
export const backupRestoredOperation = defineLocalOperation({
  id: 'backupRestore',
  summary: 'Record a restore done on the box',
  input: z.object({ archive: z.string().min(1).max(4096), createdAt: z.string(), schemaVersion: z.number().int(), movedAside: z.string().nullable() }).strict(),
  access: { caller: 'local' },
  audit: true,
});
