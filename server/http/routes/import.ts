import fs from 'node:fs';
import path from 'node:path';
import type { Express, Request, Response, NextFunction } from 'express';
import multer from 'multer';
import type { Config } from '../../config.ts';
import type { ImportService } from '../../ingest/import-service.ts';
import type { Operations } from '../../operations/index.ts';
import { ApiError } from '../../../lib/errors.ts';
import { route } from '../handler.ts';
import { callerOf } from '../auth.ts';
import { cutOffError, runMulter } from '../multipart.ts';
import { importOperation } from '../../contracts/sources.ts';

/** Upload fields that carry the bundle file (the hosted export uses bundleFile; curl users type file). */
const FILE_FIELDS = ['bundleFile', 'file'];

/** What the import route uses: the importer's upload files, the limit, and the operation. */
export interface ImportRouteDeps {
  importer: Pick<ImportService, 'uploadsDir' | 'tempUploadPath' | 'saveUpload'>;
  config: Pick<Config, 'importMaxBytes'>;
  operations: Pick<Operations, 'admit' | 'importLibraries'>;
}

/**
 * POST /api/import-libraries: a JSON body, a raw zip, or multipart/form-data with an export file.
 * The key and the license are checked before a byte of the body is read; the body goes to a temp
 * file (never into memory), the importer stages and queues, and the temp file is removed.
 */
export function mountImport(app: Express, s: ImportRouteDeps): void {
  const upload = multer({
    storage: multer.diskStorage({
      destination: (_req, _file, cb) => cb(null, s.importer.uploadsDir),
      filename: (_req, _file, cb) => cb(null, path.basename(s.importer.tempUploadPath('.part'))),
    }),
    limits: { fileSize: s.config.importMaxBytes, files: 1, fields: 20, fieldSize: 64 * 1024 },
  }).fields(FILE_FIELDS.map((name) => ({ name, maxCount: 1 })));

  /** Key, role and license before a byte of the body is read. */
  const admitFirst = (_req: Request, res: Response, next: NextFunction) => {
    try {
      s.operations.admit(importOperation, callerOf(res));
      next();
    } catch (err) {
      next(err);
    }
  };

  /** Refuses oversized bodies by their declared length before reading them. */
  const checkLength = (req: Request, _res: Response, next: NextFunction) => {
    const declared = Number(req.get('content-length') ?? 0);
    // Multipart adds a little framing around the file.
    if (declared > s.config.importMaxBytes + 64 * 1024) return next(tooLarge(s));
    next();
  };

  app.post(
    '/api/import-libraries',
    admitFirst,
    checkLength,
    route(async (req, res) => {
      const type = (req.get('content-type') ?? '').toLowerCase();
      // `force` and `visibility` come as query parameters, or as form fields of a multipart upload.
      const query = (name: string): unknown => (Array.isArray(req.query[name]) ? (req.query[name] as unknown[])[0] : req.query[name]);
      const input: { force?: unknown; visibility?: unknown } = { force: query('force'), visibility: query('visibility') };
      let file: string | null = null;
      try {
        if (type.startsWith('multipart/form-data')) {
          const received = await receiveMultipart(upload, req, res, s);
          file = received.file;
          input.force ??= received.force;
          input.visibility ??= received.visibility;
        } else if (/^(application\/(json|[\w.+-]+\+json|zip|x-zip-compressed|octet-stream)|text\/json)\b/.test(type)) {
          file = await saveBody(s, req);
        } else {
          throw new ApiError(
            'unsupported_media_type',
            `Content-Type "${type}" is not accepted: send application/json, application/zip or multipart/form-data.`,
          );
        }
        res.status(200).json(await s.operations.importLibraries(input, file, callerOf(res)));
      } finally {
        if (file) fs.rmSync(file, { force: true });
      }
    }),
  );
}

/** Streams a raw body to a temp file; a connection cut before its end is the client's error (400), not a 500. */
async function saveBody(s: Pick<ImportRouteDeps, 'importer'>, req: Request): Promise<string> {
  try {
    return await s.importer.saveUpload(req);
  } catch (err) {
    throw cutOffError(err) ?? err;
  }
}

function tooLarge(s: Pick<ImportRouteDeps, 'config'>): ApiError {
  return new ApiError('payload_too_large', `The upload is larger than the import limit of ${s.config.importMaxBytes} bytes (STACKS_IMPORT_MAX_BYTES).`);
}

/** Runs multer and returns the saved file and the optional `force` and `visibility` form fields. */
async function receiveMultipart(
  upload: ReturnType<ReturnType<typeof multer>['fields']>,
  req: Request,
  res: Response,
  s: Pick<ImportRouteDeps, 'config'>,
): Promise<{ file: string; force?: string; visibility?: string }> {
  await runMulter(upload, req, res, { fileField: '"bundleFile" (or "file")', maxFileBytes: s.config.importMaxBytes, maxFiles: 1, tooLarge: () => tooLarge(s) });
  const files = (req.files ?? {}) as Record<string, Express.Multer.File[]>;
  const saved = FILE_FIELDS.flatMap((f) => files[f] ?? []);
  if (saved.length === 0) throw new ApiError('validation_error', 'Missing required field "bundleFile": attach the export file (field bundleFile or file).');
  const body = req.body as Record<string, unknown> | undefined;
  const field = (name: string) => (body?.[name] === undefined ? undefined : String(body[name]));
  return { file: saved[0]!.path, force: field('force'), visibility: field('visibility') };
}
