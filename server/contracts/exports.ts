import { z } from 'zod';
import { defineOperation } from './operation.ts';

/** Export libraries in the import bundle format: GET /api/export, `stacks export`. */

export const exportInput = z.object({
  library: z
    .preprocess(
      (v) => (v === undefined ? [] : typeof v === 'string' ? [v] : v),
      z.array(z.string().trim().min(1).max(500)).min(1, 'name at least one library').max(100),
    )
    .describe('library IDs (repeat the parameter): /owner/repo exports every served version, /owner/repo/<version> one'),
});

export const exportOperation = defineOperation({
  id: 'exportLibraries',
  summary: 'Export libraries as an import bundle ({"libraries": [...]}, one entry per served version), for POST /api/import-libraries on another instance',
  input: exportInput,
  access: { caller: 'key' },
  http: {
    method: 'get',
    path: '/api/export',
    from: 'query',
    status: 200,
    response: z.object({ libraries: z.array(z.record(z.string(), z.unknown())) }).describe('the import bundle, see docs/import.md'),
  },
  errors: ['invalid_api_key', 'forbidden', 'invalid_library_id', 'library_not_found'],
  audit: true,
});
