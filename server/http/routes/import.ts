import fs from 'node:fs';
import path from 'node:path';
import type { Express, Request, Response, NextFunction } from 'express';
import multer from 'multer';
import { z } from 'zod';
import type { Config } from '../../config.ts';
import type { LicenseService } from '../../license/license.ts';
import type { ImportService } from '../../ingest/import-service.ts';
import { ApiError } from '../../../lib/errors.ts';
import { route } from '../handler.ts';
import { principalOf, requireKey } from '../auth.ts';
import { validate } from '../../../lib/validate.ts';
import { bundleMeta } from '../../ingest/bundle.ts';
import { sourceRefusal, type SourceCheckServices } from '../../teams/policy.ts';

const boolParam = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const importQuery = z.object({ force: boolParam.optional() });

/** Upload fields that carry the bundle file (the hosted export uses bundleFile; curl users type file). */
const FILE_FIELDS = ['bundleFile', 'file'];

export interface ImportRouteDeps extends SourceCheckServices {
  importer: Pick<ImportService, 'uploadsDir' | 'tempUploadPath' | 'saveUpload' | 'importFile'>;
  license: Pick<LicenseService, 'require'>;
  config: Pick<Config, 'importMaxBytes'>;
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

  const checkLicense = (_req: Request, _res: Response, next: NextFunction) => {
    try {
      s.license.require('import');
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
    requireKey(['owner', 'admin']),
    checkLicense,
    checkLength,
    route(async (req, res) => {
      const query = validate(importQuery, req.query);
      const type = (req.get('content-type') ?? '').toLowerCase();
      let force: boolean | null = query.force ?? null;
      let file: string | null = null;
      try {
        if (type.startsWith('multipart/form-data')) {
          const received = await receiveMultipart(upload, req, res, s);
          file = received.file;
          if (force === null && received.force !== undefined) force = validate(z.object({ force: boolParam }), { force: received.force }).force;
        } else if (/^(application\/(json|[\w.+-]+\+json|zip|x-zip-compressed|octet-stream)|text\/json)\b/.test(type)) {
          file = await s.importer.saveUpload(req);
        } else {
          throw new ApiError('unsupported_media_type', `Content-Type "${type}" is not accepted: send application/json, application/zip or multipart/form-data.`);
        }
        const principal = principalOf(res);
        const result = await s.importer.importFile(file, { force, memberId: principal?.memberId ?? null, refuse: (h) => sourceRefusal(s, principal, bundleMeta(h, h.project)) });
        res.status(200).json(result);
      } finally {
        if (file) fs.rmSync(file, { force: true });
      }
    }),
  );
}

function tooLarge(s: Pick<ImportRouteDeps, 'config'>): ApiError {
  return new ApiError('payload_too_large', `The upload is larger than the import limit of ${s.config.importMaxBytes} bytes (STACKS_IMPORT_MAX_BYTES).`);
}

/** Runs multer and returns the saved file and the optional `force` form field. */
async function receiveMultipart(
  upload: ReturnType<ReturnType<typeof multer>['fields']>,
  req: Request,
  res: Response,
  s: Pick<ImportRouteDeps, 'config'>,
): Promise<{ file: string; force?: string }> {
  await new Promise<void>((resolve, reject) => {
    upload(req, res, (err: unknown) => {
      if (!err) return resolve();
      if (err instanceof multer.MulterError) {
        if (err.code === 'LIMIT_FILE_SIZE') return reject(tooLarge(s));
        if (err.code === 'LIMIT_UNEXPECTED_FILE') return reject(new ApiError('validation_error', `Unexpected file field "${err.field}": send the bundle in the field "bundleFile" (or "file"), one file only.`));
        return reject(new ApiError('validation_error', `The multipart upload was rejected: ${err.message}.`));
      }
      reject(err);
    });
  });
  const files = (req.files ?? {}) as Record<string, Express.Multer.File[]>;
  const saved = FILE_FIELDS.flatMap((f) => files[f] ?? []);
  if (saved.length === 0) throw new ApiError('validation_error', 'Missing required field "bundleFile": attach the export file (field bundleFile or file).');
  const raw = (req.body as Record<string, unknown> | undefined)?.force;
  return { file: saved[0]!.path, force: raw === undefined ? undefined : String(raw) };
}
