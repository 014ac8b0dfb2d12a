import type { Express } from 'express';
import fs from 'node:fs';
import path from 'node:path';
import multer from 'multer';
import type { Operations } from '../../operations/index.ts';
import type { SourceService } from '../../sources/service.ts';
import { ApiError } from '../../../lib/errors.ts';
import { route } from '../handler.ts';
import { callerOf } from '../auth.ts';
import { requireMultipart, runMulter } from '../multipart.ts';
import type { StagedUpload } from '../../sources/service.ts';
import { LIMITS } from '../../contracts/limits.ts';
import { fileUploadOperation, openApiUploadOperation } from '../../contracts/sources.ts';

/**
 * POST /api/v2/add/openapi, /openapi-upload, /llmstxt, /file-upload. Every one needs an API key
 * and a valid license and answers the library submission result {libraryName, message} (plus jobId).
 */

/** What these routes use: the operations, and the sources' staging folders for streamed uploads. */
export interface SourceRouteDeps {
  operations: Pick<Operations, 'admit' | 'addOpenApi' | 'addLlmsTxt' | 'addOpenApiUpload' | 'addFiles'>;
  sources: Pick<SourceService, 'newStagingDir' | 'removeStaging'>;
}

export function mountSources(app: Express, s: SourceRouteDeps): void {
  app.post(
    '/api/v2/add/openapi',
    route(async (req, res) => res.json(await s.operations.addOpenApi(req.body ?? {}, callerOf(res)))),
  );
  app.post(
    '/api/v2/add/llmstxt',
    route(async (req, res) => res.json(await s.operations.addLlmsTxt(req.body ?? {}, callerOf(res)))),
  );

  // "Requires a team project": the key's member must be an owner or admin of its teamspace, and the
  // library belongs to that teamspace (libraries.teamspace_id), visible only to its members.
  const openApiUpload = multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: LIMITS.openApiUploadBytes, files: 1, fields: 10, fieldSize: 64 * 1024 },
  }).single('openapiFile');
  app.post(
    '/api/v2/add/openapi-upload',
    route(async (req, res) => {
      const caller = callerOf(res);
      s.operations.admit(openApiUploadOperation, caller);
      requireMultipart(req);
      await runMulter(openApiUpload, req, res, { fileField: 'openapiFile', maxFileBytes: LIMITS.openApiUploadBytes, maxFiles: 1 });
      const file = req.file ? { name: req.file.originalname, data: req.file.buffer } : undefined;
      res.json(await s.operations.addOpenApiUpload(req.body ?? {}, file, caller));
    }),
  );

  mountFileUpload(app, s);
}

/** POST /api/v2/add/file-upload: PDF and DOCX files, streamed to a staging folder. */
function mountFileUpload(app: Express, s: SourceRouteDeps): void {
  app.post(
    '/api/v2/add/file-upload',
    route(async (req, res) => {
      const caller = callerOf(res);
      s.operations.admit(fileUploadOperation, caller);
      requireMultipart(req);
      // Refuse an oversized upload before reading it (multipart framing adds a little to the files).
      const declared = Number(req.get('content-length'));
      if (Number.isFinite(declared) && declared > LIMITS.totalBytes + 4 * 1024 * 1024) {
        res.setHeader('connection', 'close');
        throw new ApiError(
          'payload_too_large',
          `The upload is ${(declared / 1024 / 1024).toFixed(1)} MB; the limit is ${LIMITS.totalBytes / 1024 / 1024} MB in total.`,
        );
      }
      const dir = s.sources.newStagingDir();
      let handedOver = false;
      try {
        const upload = multer({
          storage: countingDiskStorage(dir, LIMITS.totalBytes),
          limits: { fileSize: LIMITS.fileBytes, files: LIMITS.files, fields: 20, fieldSize: 1024 * 1024, parts: LIMITS.files + 20 },
        }).array('documentFiles', LIMITS.files);
        await runMulter(upload, req, res, { fileField: 'documentFiles', maxFileBytes: LIMITS.fileBytes, maxFiles: LIMITS.files });
        const files = ((req.files as Express.Multer.File[] | undefined) ?? []).map(
          (f): StagedUpload => ({ path: f.path, originalName: f.originalname, size: f.size }),
        );
        const result = await s.operations.addFiles(req.body ?? {}, { dir, files }, caller);
        handedOver = true;
        res.json(result);
      } finally {
        if (!handedOver) s.sources.removeStaging(dir);
      }
    }),
  );
}

/** Multer storage writing each file into dir and enforcing a limit on the request's total bytes while streaming. */
function countingDiskStorage(dir: string, maxTotal: number): multer.StorageEngine {
  let total = 0;
  let n = 0;
  return {
    _handleFile(_req, file, cb) {
      const target = path.join(dir, `upload-${n++}.bin`);
      const out = fs.createWriteStream(target, { flags: 'wx' });
      let size = 0;
      let failed = false;
      const fail = (err: Error) => {
        if (failed) return;
        failed = true;
        file.stream.unpipe(out);
        file.stream.resume();
        out.destroy();
        fs.rm(target, { force: true }, () => cb(err));
      };
      file.stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        total += chunk.length;
        if (total > maxTotal)
          fail(new ApiError('payload_too_large', `The upload exceeds the limit of ${maxTotal / 1024 / 1024} MB in total. Nothing was stored.`));
      });
      file.stream.on('error', (err: Error) => fail(err));
      out.on('error', (err) => fail(err));
      out.on('finish', () => {
        if (!failed) cb(null, { path: target, size, destination: dir, filename: path.basename(target) });
      });
      file.stream.pipe(out);
    },
    _removeFile(_req, file, cb) {
      fs.rm(file.path, { force: true }, () => cb(null));
    },
  };
}
