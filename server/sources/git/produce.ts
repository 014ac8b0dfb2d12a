import fs from 'node:fs';
import path from 'node:path';
import type { Stores } from '../../store/stores.ts';
import type { VersionSink } from '../../ingest/version-job.ts';
import type { StoredCopy } from '../../ingest/writer.ts';
import type { SnippetInput } from '../../../lib/model.ts';
import { fileUrl, type RepoAddress } from './address.ts';
import { documentSnippets } from './documents.ts';
import { sourceSnippets } from './code-index.ts';

/**
 * The content step of a git build: the snippets of files whose blob is unchanged since the
 * version being replaced are copied from it (with their embeddings); every other selected file is
 * read, converted and split. One file failing is reported, not fatal.
 */
export interface ProduceInput {
  dir: string;
  addr: RepoAddress;
  /** Branch or tag the web links point at. */
  ref: string;
  docs: string[];
  sources: string[];
  blobs: Map<string, string>;
  /** The version being replaced and its files' blobs, when its snippets may be reused. */
  previous: { versionId: number; dynamicVersionId: number | null; files: Map<string, string> } | null;
}

export interface ProduceReport {
  files: number;
  reused: number;
  parsed: number;
  failed: number;
  errors: { file: string; error: string }[];
  [key: string]: unknown;
}

/** Files parsed per sink.add call (one embedding batch, one cancel check). */
const PARSE_BATCH = 40;

export async function produceFiles(store: Pick<Stores, 'snippets'>, sink: VersionSink, input: ProduceInput): Promise<ProduceReport> {
  const all = [...input.docs, ...input.sources];
  const report: ProduceReport = { files: all.length, reused: 0, parsed: 0, failed: 0, errors: [] };
  const unchanged = new Set(all.filter((f) => input.previous && input.previous.files.get(f) === input.blobs.get(f)));
  if (input.previous && unchanged.size) {
    for (const versionId of [input.previous.versionId, input.previous.dynamicVersionId]) {
      if (versionId === null) continue;
      const copies: StoredCopy[] = (await store.snippets.allWithEmbeddings(versionId)).filter(
        (c) => c.snippet.sourceFile !== null && unchanged.has(c.snippet.sourceFile),
      );
      await sink.addStored(copies);
    }
    report.reused = unchanged.size;
    sink.report({ phase: 'indexing', ...report }, true);
  }
  const docs = new Set(input.docs);
  const todo = all.filter((f) => !unchanged.has(f));
  for (let i = 0; i < todo.length; i += PARSE_BATCH) {
    sink.checkCancelled();
    const batch: SnippetInput[] = [];
    for (const file of todo.slice(i, i + PARSE_BATCH)) {
      try {
        const text = fs.readFileSync(path.join(input.dir, file), 'utf8');
        batch.push(
          ...(docs.has(file)
            ? documentSnippets(file, text, fileUrl(input.addr, input.ref, file))
            : sourceSnippets(file, text, (line) => fileUrl(input.addr, input.ref, file, line ? `L${line}` : ''))),
        );
        report.parsed++;
      } catch (err) {
        report.failed++;
        if (report.errors.length < 50) report.errors.push({ file, error: err instanceof Error ? err.message : String(err) });
      }
    }
    await sink.add(batch);
    sink.report({ phase: 'indexing', ...report });
  }
  sink.report({ phase: 'indexing', ...report }, true);
  return report;
}
