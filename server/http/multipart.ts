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

/** Errors of a connection that ended before the body did (multer's own, and Node's for a reset socket). */
const CUT_OFF_MESSAGES = new Set(['Request aborted', 'Request closed', 'aborted']);
const CUT_OFF_CODES = new Set(['ECONNRESET', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE']);

/** The answer for an upload whose connection ended before its body did; null for any other error. */
export function cutOffError(err: unknown): ApiError | null {
  if (!(err instanceof Error)) return null;
  const code = (err as NodeJS.ErrnoException).code;
  if (!CUT_OFF_MESSAGES.has(err.message) && !(code !== undefined && CUT_OFF_CODES.has(code))) return null;
  // Nobody may be left to read it, but the failure is the client's, not the server's: no 500, no error in the log.
  return new ApiError('validation_error', 'The upload ended before its body did (connection cut or body truncated). Nothing was stored.');
}

/**
 * An error of the body rather than of the server. busboy reports what it cannot parse ("Unexpected
 * end of form", "Malformed part header", "Multipart: Boundary not found", "Malformed content type")
 * as plain Errors without a code. A system error (a full disk: it has a code) or a programming
 * error (a TypeError) is not the client's: it stays a 500, and is logged.
 */
function bodyError(err: unknown): ApiError | null {
  const cut = cutOffError(err);
  if (cut || !(err instanceof Error)) return cut;
  const plain =
    Object.getPrototypeOf(err) === Error.prototype && (err as NodeJS.ErrnoException).code === undefined && (err as NodeJS.ErrnoException).errno === undefined;
  if (!plain) return null;
  const reason = err.message.replace(/^Multipart: /, '').replace(/\.$/, '');
  return new ApiError(
    'validation_error',
    `The multipart/form-data body could not be read: ${reason.charAt(0).toLowerCase()}${reason.slice(1)}. Send a complete body with the boundary of its Content-Type. Nothing was stored.`,
  );
}

/** The one place multer's (and busboy's) errors become clear 413/400 answers. */
export function multerError(err: unknown, info: UploadLimits): ApiError | unknown {
  if (err instanceof ApiError) return err;
  if (!(err instanceof multer.MulterError)) return bodyError(err) ?? err;
  const mb = (n: number) => `${n / 1024 / 1024} MB`;
  switch (err.code) {
    case 'LIMIT_FILE_SIZE':
      return (
        info.tooLarge?.() ??
        new ApiError('payload_too_large', `A file in ${info.fileField} is larger than the limit of ${mb(info.maxFileBytes)} per file. Nothing was stored.`)
      );
    case 'LIMIT_FILE_COUNT':
      return new ApiError('payload_too_large', `Too many files: at most ${info.maxFiles} ${info.fileField} per request. Nothing was stored.`);
    case 'LIMIT_PART_COUNT':
    case 'LIMIT_FIELD_COUNT':
      return new ApiError('payload_too_large', 'Too many form fields in the upload.');
    case 'LIMIT_FIELD_VALUE':
      return new ApiError('payload_too_large', `The form field ${err.field ?? ''} is too long.`);
    case 'LIMIT_UNEXPECTED_FILE':
      return new ApiError(
        'validation_error',
        `Unexpected file field "${err.field ?? ''}"; upload the file${info.maxFiles > 1 ? 's' : ''} as ${info.fileField}.`,
      );
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
