import { ApiError } from '../../lib/errors.ts';
import type { LibraryVisibility, Principal } from '../../lib/model.ts';
import type { Submitter } from '../../lib/owner.ts';
import type { SourceService, StagedUpload } from '../sources/service.ts';
import type { CrawlService } from '../sources/website/service.ts';
import type { ImportService } from '../ingest/import-service.ts';
import type { BundleHeader } from '../ingest/bundle.ts';
import {
  addLlmsTxtOperation,
  addOpenApiOperation,
  addWebsiteOperation,
  fileUploadOperation,
  importOperation,
  openApiUploadOperation,
  parseWebsiteOperation,
} from '../contracts/sources.ts';
import type { binder } from './bind.ts';
import type { Caller } from './admit.ts';
import { submitterFor } from './submitter.ts';

export interface SourceOperationDeps {
  sources: SourceService;
  crawler: CrawlService;
  importer: ImportService;
  /** The teamspace a local (CLI) caller adds to. */
  defaultTeamspaceId(): number;
  /** Why a bundle's library may not be added by this caller's teamspace policy, or null. */
  importRefusal(principal: Principal | null, header: BundleHeader, visibility: LibraryVisibility): string | null;
}

/** Adding libraries: crawl, OpenAPI, llms.txt, document files, bundle import. */
export function sourceOperations(bind: ReturnType<typeof binder>, d: SourceOperationDeps) {
  const submitter = (p: Principal | null, visibility: LibraryVisibility | undefined): Submitter => submitterFor(p, visibility, d.defaultTeamspaceId);
  return {
    parseWebsite: bind(parseWebsiteOperation, async (i, p, caller) => {
      const r = await d.crawler.submit({ ...i, trigger: caller.kind === 'local' ? 'cli' : 'api' }, submitter(p, i.visibility));
      return {
        message: r.position === null ? `Crawl of ${i.websiteUrl} started.` : `Crawl of ${i.websiteUrl} queued at position ${r.position}.`,
        project: r.libraryId,
        queueId: r.jobId,
        position: r.position,
      };
    }),
    addWebsite: bind(addWebsiteOperation, async (i, p, caller) => {
      const r = await d.crawler.submit({ websiteUrl: i.websiteUrl, trigger: caller.kind === 'local' ? 'cli' : 'api' }, submitter(p, i.visibility));
      return {
        libraryName: r.libraryId,
        message: `Website ${i.websiteUrl} submitted for indexing as ${r.libraryId} (job ${r.jobId}); follow it at /api/jobs/${r.jobId}.`,
      };
    }),
    addOpenApi: bind(addOpenApiOperation, (i, p) => d.sources.submitOpenApiUrl({ url: i.openApiUrl, force: i.force ?? false }, submitter(p, i.visibility))),
    addLlmsTxt: bind(addLlmsTxtOperation, (i, p) => d.sources.submitLlmsTxt({ url: i.llmstxtUrl, force: i.force ?? false }, submitter(p, i.visibility))),
    /** `fields` are the form's text fields; the file is read by the entry point (after admitting the caller). */
    addOpenApiUpload: (fields: unknown, file: { name: string; data: Buffer } | undefined, caller: Caller) =>
      bind(openApiUploadOperation, (i, p) => {
        if (!file)
          throw new ApiError('validation_error', 'openapiFile is required: upload the OpenAPI specification (JSON or YAML) as multipart field openapiFile.');
        return d.sources.submitOpenApiUpload(
          { fileName: file.name, data: file.data, title: i.libraryTitle || undefined, description: i.description, force: i.force ?? false },
          submitter(p, i.visibility),
        );
      })(fields, caller),
    /** `files` were staged into `stagedDir` by the entry point; on success the job owns the folder. */
    addFiles: (fields: unknown, staged: { dir: string; files: StagedUpload[] }, caller: Caller) =>
      bind(fileUploadOperation, (i, p) =>
        d.sources.submitFiles(
          {
            stagedDir: staged.dir,
            files: staged.files,
            relativePaths: relativePaths(i.relativePaths),
            collectionName: i.collectionName,
            projectTitle: i.projectTitle,
            description: i.description,
            force: i.force ?? false,
          },
          submitter(p, i.visibility),
        ),
      )(fields, caller),
    /** `file` is the received bundle (JSON or zip) in a temporary file the entry point removes. */
    importLibraries: (raw: unknown, file: string, caller: Caller) =>
      bind(importOperation, (i, p) =>
        d.importer.importFile(file, {
          force: i.force ?? null,
          who: submitter(p, i.visibility),
          refuse: (h) => d.importRefusal(p, h, i.visibility ?? 'instance'),
        }),
      )(raw, caller),
  };
}

/** The files' paths, a JSON array of strings in upload order. */
function relativePaths(raw: string | undefined): string[] | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ApiError('validation_error', 'relativePaths must be a JSON array of strings, e.g. ["guides/intro.pdf"].');
  }
  if (!Array.isArray(parsed) || !parsed.every((p) => typeof p === 'string'))
    throw new ApiError('validation_error', 'relativePaths must be a JSON array of strings.');
  return parsed as string[];
}
