import type { Express, Request, Response } from 'express';
import fs from 'node:fs';
import path from 'node:path';
import multer from 'multer';
import { z } from 'zod';
import type { LicenseService } from '../../license/license.ts';
import type { Principal } from '../../../lib/model.ts';
import { ApiError } from '../../../lib/errors.ts';
import { route } from '../handler.ts';
import { requirePrincipal } from '../auth.ts';
import { validate } from '../../../lib/validate.ts';
import { assertSourceEnabled, type SourceCheckServices } from '../../teams/policy.ts';
import type { SourceService, StagedUpload } from '../../sources/service.ts';
import { LIMITS } from '../../sources/limits.ts';

/**
 * POST /api/v2/add/openapi, /openapi-upload, /llmstxt, /file-upload. Every one needs an API key
 * and a valid license and answers the library submission result {libraryName, message} (plus jobId).
 */

const url = z.string().trim().min(1, 'must not be empty').max(2048);
const flag = z.union([z.boolean(), z.enum(['true', 'false', '1', '0', '']).transform((v) => v === 'true' || v === '1')]);

const openApiBody = z.object({ openApiUrl: url, force: flag.optional() });
const llmsBody = z.object({ llmstxtUrl: url, force: flag.optional() });
const openApiUploadFields = z.object({
  libraryTitle: z.string().trim().max(200).optional(),
  description: z.string().trim().max(2000).optional(),
  force: flag.optional(),
});
const fileUploadFields = z.object({
  collectionName: z.string().trim().max(200).optional(),
  projectTitle: z.string().trim().max(200).optional(),
  description: z.string().trim().max(2000).optional(),
  relativePaths: z.string().max(1_000_000).optional(),
  force: flag.optional(),
});

export interface SourceRouteDeps extends SourceCheckServices {
  license: Pick<LicenseService, 'require'>;
  sources: Pick<SourceService, 'submitOpenApiUrl' | 'submitLlmsTxt' | 'submitOpenApiUpload' | 'submitFiles' | 'newStagingDir' | 'removeStaging'>;
}

function gate(s: SourceRouteDeps, res: Response, roles?: ('owner' | 'admin' | 'member')[]): Principal {
  const principal = requirePrincipal(res, roles);
  s.license.require();
  return principal;
}

export function mountSources(app: Express, s: SourceRouteDeps): void {
  app.post(
    '/api/v2/add/openapi',
    route(async (req, res) => {
      const principal = gate(s, res);
      assertSourceEnabled(s, principal, 'websites');
      const body = validate(openApiBody, req.body ?? {});
      res.json(await s.sources.submitOpenApiUrl({ url: body.openApiUrl, force: body.force ?? false }, principal));
    }),
  );

  app.post(
    '/api/v2/add/llmstxt',
    route(async (req, res) => {
      const principal = gate(s, res);
      assertSourceEnabled(s, principal, 'llmstxt');
      const body = validate(llmsBody, req.body ?? {});
      res.json(await s.sources.submitLlmsTxt({ url: body.llmstxtUrl, force: body.force ?? false }, principal));
    }),
  );

  // "Requires a team project": the key's member must be an owner or admin of its teamspace, and the
  // library belongs to that teamspace (libraries.teamspace_id), visible only to its members.
  const openApiUpload = multer({ storage: multer.memoryStorage(), limits: { fileSize: LIMITS.openApiUploadBytes, files: 1, fields: 10, fieldSize: 64 * 1024 } }).single('openapiFile');
  app.post(
    '/api/v2/add/openapi-upload',
    route(async (req, res) => {
      const principal = gate(s, res, ['owner', 'admin']);
      assertSourceEnabled(s, principal, 'uploaded_files');
      requireMultipart(req);
      await runMulter(openApiUpload, req, res, { fileField: 'openapiFile', maxFileBytes: LIMITS.openApiUploadBytes, maxFiles: 1 });
      const fields = validate(openApiUploadFields, req.body ?? {});
      const file = req.file;
      if (!file) throw new ApiError('validation_error', 'openapiFile is required: upload the OpenAPI specification (JSON or YAML) as multipart field openapiFile.');
      res.json(
        await s.sources.submitOpenApiUpload(
          { fileName: file.originalname, data: file.buffer, title: fields.libraryTitle || undefined, description: fields.description, force: fields.force ?? false },
          principal,
        ),
      );
    }),
  );

  mountFileUpload(app, s);
}

/** POST /api/v2/add/file-upload: PDF and DOCX files, streamed to a staging folder. */
function mountFileUpload(app: Express, s: SourceRouteDeps): void {
  app.post(
    '/api/v2/add/file-upload',
    route(async (req, res) => {
      const principal = gate(s, res);
      assertSourceEnabled(s, principal, 'uploaded_files');
      requireMultipart(req);
      // Refuse an oversized upload before reading it (multipart framing adds a little to the files).
      const declared = Number(req.get('content-length'));
      if (Number.isFinite(declared) && declared > LIMITS.totalBytes + 4 * 1024 * 1024) {
        res.setHeader('connection', 'close');
        throw new ApiError('payload_too_large', `The upload is ${(declared / 1024 / 1024).toFixed(1)} MB; the limit is ${LIMITS.totalBytes / 1024 / 1024} MB in total.`);
      }
      const dir = s.sources.newStagingDir();
      let handedOver = false;
      try {
        const upload = multer({
          storage: countingDiskStorage(dir, LIMITS.totalBytes),
          limits: { fileSize: LIMITS.fileBytes, files: LIMITS.files, fields: 20, fieldSize: 1024 * 1024, parts: LIMITS.files + 20 },
        }).array('documentFiles', LIMITS.files);
        await runMulter(upload, req, res, { fileField: 'documentFiles', maxFileBytes: LIMITS.fileBytes, maxFiles: LIMITS.files });
        const fields = validate(fileUploadFields, req.body ?? {});
        const files = ((req.files as Express.Multer.File[] | undefined) ?? []).map((f): StagedUpload => ({ path: f.path, originalName: f.originalname, size: f.size }));
        const relativePaths = parseRelativePaths(fields.relativePaths);
        const result = await s.sources.submitFiles(
          { stagedDir: dir, files, relativePaths, collectionName: fields.collectionName, projectTitle: fields.projectTitle, description: fields.description, force: fields.force ?? false },
          principal,
        );
        handedOver = true;
        res.json(result);
      } finally {
        if (!handedOver) s.sources.removeStaging(dir);
      }
    }),
  );
}

/** The relativePaths form field: a JSON array of strings, or nothing. */
function parseRelativePaths(raw: string | undefined): string[] | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ApiError('validation_error', 'relativePaths must be a JSON array of strings, e.g. ["guides/intro.pdf"].');
  }
  if (!Array.isArray(parsed) || !parsed.every((p) => typeof p === 'string')) throw new ApiError('validation_error', 'relativePaths must be a JSON array of strings.');
  return parsed as string[];
}

function requireMultipart(req: Request): void {
  if (!req.is('multipart/form-data')) throw new ApiError('unsupported_media_type', 'Send the upload as multipart/form-data.');
}

/** Runs a multer middleware as a promise and turns its limit errors into 413/400 with clear messages. */
function runMulter(mw: ReturnType<ReturnType<typeof multer>['single']>, req: Request, res: Response, info: { fileField: string; maxFileBytes: number; maxFiles: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    mw(req, res, (err?: unknown) => {
      if (!err) return resolve();
      if (err instanceof ApiError) return reject(err);
      const e = err as { code?: string; field?: string; message?: string };
      switch (e.code) {
        case 'LIMIT_FILE_SIZE':
          return reject(new ApiError('payload_too_large', `A file in ${info.fileField} is larger than the limit of ${info.maxFileBytes / 1024 / 1024} MB per file. Nothing was stored.`));
        case 'LIMIT_FILE_COUNT':
          return reject(new ApiError('payload_too_large', `Too many files: at most ${info.maxFiles} ${info.fileField} per request. Nothing was stored.`));
        case 'LIMIT_PART_COUNT':
        case 'LIMIT_FIELD_COUNT':
          return reject(new ApiError('payload_too_large', 'Too many form fields in the upload.'));
        case 'LIMIT_FIELD_VALUE':
          return reject(new ApiError('payload_too_large', `The form field ${e.field ?? ''} is too long.`));
        case 'LIMIT_UNEXPECTED_FILE':
          return reject(new ApiError('validation_error', `Unexpected file field "${e.field ?? ''}"; upload files as ${info.fileField}.`));
        default:
          return reject(new ApiError('validation_error', `The multipart upload could not be read: ${e.message ?? String(err)}`));
      }
    });
  });
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
        if (total > maxTotal) fail(new ApiError('payload_too_large', `The upload exceeds the limit of ${maxTotal / 1024 / 1024} MB in total. Nothing was stored.`));
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
