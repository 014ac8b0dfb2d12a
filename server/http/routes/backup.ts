import type { Express } from 'express';
import type { Operations } from '../../operations/index.ts';
import { route } from '../handler.ts';
import { callerOf } from '../auth.ts';

export interface BackupRouteDeps {
  operations: Pick<Operations, 'backupCreate' | 'backupsList' | 'backupDownload'>;
}

/** POST /api/backup writes an archive on the server; GET /api/backups lists them; GET /api/backups/:name downloads one. */
export function mountBackup(app: Express, s: BackupRouteDeps): void {
  app.post(
    '/api/backup',
    route(async (req, res) => res.json(await s.operations.backupCreate(req.body ?? {}, callerOf(res)))),
  );
  app.get(
    '/api/backups',
    route(async (req, res) => res.json(await s.operations.backupsList(req.query, callerOf(res)))),
  );
  app.get(
    '/api/backups/:name',
    route(async (req, res) => {
      const { name, file } = await s.operations.backupDownload({ name: req.params.name }, callerOf(res));
      await new Promise<void>((resolve, reject) =>
        res
          .type('application/gzip')
          .attachment(name)
          .sendFile(file, (err) => (err ? reject(err) : resolve())),
      );
    }),
  );
}
