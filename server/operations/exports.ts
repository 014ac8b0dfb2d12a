import type { ExportService } from '../ingest/export.ts';
import { exportOperation } from '../contracts/exports.ts';
import type { binder } from './bind.ts';
import { readerOf } from './search.ts';

export interface ExportOperationDeps {
  exporter: Pick<ExportService, 'plan'>;
}

/** GET /api/export and `stacks export`: what the caller may read, as a bundle (the operator reads everything). */
export function exportOperations(bind: ReturnType<typeof binder>, d: ExportOperationDeps) {
  return {
    exportLibraries: bind(exportOperation, (i, p, caller) => d.exporter.plan(readerOf(p, caller), i.library)),
  };
}
