import type { Express } from 'express';
import type { Operations } from '../../operations/index.ts';
import { route } from '../handler.ts';
import { callerOf } from '../auth.ts';

export interface ExportRouteDeps {
  operations: Pick<Operations, 'exportLibraries'>;
}

/** GET /api/export?library=/o/r&library=...: the bundle streamed as it is read (a large library is never held in memory). */
export function mountExport(app: Express, s: ExportRouteDeps): void {
  app.get(
    '/api/export',
    route(async (req, res) => {
      const plan = await s.operations.exportLibraries(req.query, callerOf(res));
      const chunks = plan.chunks();
      res.type('application/json').attachment('stacks-export.json');
      // A client that goes away stops the reading (the generator's finally closes the snapshot).
      res.once('close', () => void chunks.return(undefined));
      try {
        for await (const chunk of chunks) {
          if (res.destroyed) break;
          if (!res.write(chunk)) await new Promise<void>((resolve) => res.once('drain', resolve).once('close', resolve));
        }
      } catch (err) {
        // The status and the first bytes are gone: cut the connection so the client sees a broken download, not a short bundle.
        res.destroy(err as Error);
        throw err;
      }
      res.end();
    }),
  );
}
