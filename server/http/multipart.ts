import type { Request, Response } from 'express';
import multer from 'multer';
import { ApiError } from '../../lib/errors.ts';

/** What the limit messages name: the file field, its per-file limit, how many files it takes. */
export interface UploadLimits {
  fileField: string;
  maxFileBytes: number;
  maxFiles: number;
  /** The message for a file over the limit (default: names the field and the limit). */
  tooLarge?: () => ApiError;
}

type Middleware = (req: Request, res: Response, next: (err?: unknown) => void) => void;

/** The one place multer's errors become clear 413/400 answers. */
export function multerError(err: unknown, info: UploadLimits): ApiError | unknown {
  if (err instanceof ApiError || !(err instanceof multer.MulterError)) return err;
  const mb = (n: number) => `${n / 1024 / 1024} MB`;
  switch (err.code) {
    case 'LIMIT_FILE_SIZE':
      return info.tooLarge?.() ?? new ApiError('payload_too_large', `A file in ${info.fileField} is larger than the limit of ${mb(info.maxFileBytes)} per file. Nothing was stored.`);
    case 'LIMIT_FILE_COUNT':
      return new ApiError('payload_too_large', `Too many files: at most ${info.maxFiles} ${info.fileField} per request. Nothing was stored.`);
    case 'LIMIT_PART_COUNT':
    case 'LIMIT_FIELD_COUNT':
      return new ApiError('payload_too_large', 'Too many form fields in the upload.');
    case 'LIMIT_FIELD_VALUE':
      return new ApiError('payload_too_large', `The form field ${err.field ?? ''} is too long.`);
    case 'LIMIT_UNEXPECTED_FILE':
      return new ApiError('validation_error', `Unexpected file field "${err.field ?? ''}"; upload the file${info.maxFiles > 1 ? 's' : ''} as ${info.fileField}.`);
    default:
      return new ApiError('validation_error', `The multipart upload could not be read: ${err.message}`);
  }
}

/** Runs a multer middleware as a promise, its errors mapped by multerError. */
export function runMulter(mw: Middleware, req: Request, res: Response, info: UploadLimits): Promise<void> {
  return new Promise((resolve, reject) => {
    mw(req, res, (err?: unknown) => (err ? reject(multerError(err, info)) : resolve()));
  });
}

export function requireMultipart(req: Request): void {
  if (!req.is('multipart/form-data')) throw new ApiError('unsupported_media_type', 'Send the upload as multipart/form-data.');
}
