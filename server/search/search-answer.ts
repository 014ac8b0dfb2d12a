import type { Reader } from '../../lib/model.ts';
import type { SearchReads } from '../store/version-reads.ts';
import type { AccessPolicy, Rendered, SearchContextResponse, VersionStatus } from './answer-types.ts';
import type { PreparedQuery } from './query.ts';
import type { Candidate } from './retrieve.ts';
import type { Embedder } from '../embed/types.ts';
import type { Logger } from '../log.ts';
import type { SearchTarget } from './search-target.ts';
import { sqliteOnly, type ServingStore } from './serving.ts';
import { shapeAnswer, shapeAnswerAsync } from './pipeline.ts';
import { codeSnippetJson, infoSnippetJson, lazyRendered, renderText } from './render.ts';
import { worstStatus } from './versions.ts';

/** A search up to its global ranking: what the "nothing found" decision and the answer are made from. */
export interface RankedSearch {
  /** The question as asked (its words as typed weigh in the "nothing found" decision). */
  q: PreparedQuery;
  targets: SearchTarget[];
  ranked: Candidate[];
  /** The libraries were picked from the question's words alone: only then may the answer be "nothing found". */
  inferred: boolean;
  /** The version parameter, unless absent or `latest`. */
  versionParam: string | undefined;
  /** A library, the embedder or the ranking failed: the answer is partial. */
  failed: boolean;
  /** On PostgreSQL, the request's reads (pgRequestReads: each version's row read once; request-reads.ts: each word's count, the catalogue's model times); null on SQLite. */
  reads: SearchReads | null;
}

/** The pipeline's shaping of the ranked list (pipeline.ts shapeAnswer), rendered with its version report, rules and headers. */
export async function searchAnswer(
  r: RankedSearch,
  principal: Reader,
  d: { store: ServingStore; embedder: Embedder | null; access: AccessPolicy; log: Logger },
): Promise<Rendered<SearchContextResponse>> {
  const { targets, versionParam, failed } = r;
  const store = d.store;
  const onContextError = (err: Error) => d.log.warn({ err: err.message }, 'search: context around hits skipped');
  const shape = { labels: targets.map((t) => t.label), onContextError };
  const reads = r.reads;
  const items = reads ? await shapeAnswerAsync(reads, r.ranked, shape) : shapeAnswer(sqliteOnly(store), r.ranked, shape);

  const returned = targets.filter((t) => items.some((i) => i.libraryId === t.label));
  const json: SearchContextResponse = {
    codeSnippets: items.filter((i) => i.snippet.kind === 'code').map((i) => ({ ...codeSnippetJson(i.snippet), libraryId: i.libraryId })),
    infoSnippets: items.filter((i) => i.snippet.kind === 'info').map((i) => ({ ...infoSnippetJson(i.snippet), libraryId: i.libraryId })),
  };
  const rules = rulesOf(d.access, principal, returned);
  if (rules) json.rules = rules;

  const headers: Record<string, string> = {};
  const asked = returned.filter((t) => t.requested !== null);
  const versionAsked = versionParam !== undefined || targets.some((t) => t.requested !== null);
  let worst: VersionStatus | null = null;
  if (versionAsked) {
    worst = worstStatus(asked.map((t) => t.status ?? 'unverified'));
    json.version = {
      ...(versionParam !== undefined ? { requested: versionParam } : {}),
      status: worst,
      libraries: asked.map((t) => ({ libraryId: t.label, requested: t.requested!, served: t.served, status: t.status ?? 'unverified' })),
    };
    headers['X-Stacks-Search-Version'] = worst;
  }
  const reason = failed ? 'partialSearchFailure' : worst === 'unverified' ? 'versionUnverified' : worst === 'prerelease' ? 'versionPrerelease' : null;
  if (reason) {
    headers['X-Stacks-Search-Status'] = 'partial';
    headers['X-Stacks-Search-Reason'] = reason;
  }
  // Pending: a library whose vectors the embed job has not completed was searched by its words alone.
  if (d.embedder) {
    // On PostgreSQL from the rows the retrieval read (the request's reads remember them).
    const ready = reads
      ? (await Promise.all(returned.map((t) => reads.vectorsReady(t.version.id)))).every(Boolean)
      : returned.every((t) => sqliteOnly(store).search.vectorsReady(t.version.id));
    headers['X-Stacks-Vectors'] = ready ? 'ready' : 'pending';
  }
  // Header values must be Latin-1 without control characters: percent-encode anything else in an ID.
  headers['X-Stacks-Libraries'] = returned.map((t) => t.label.replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c))).join(', ');
  const text = () => {
    const ruleLines = rules ? [...rules.global, ...rules.libraries.flatMap((l) => [...l.libraryOwn, ...l.libraryTeam].map((r) => `${l.libraryId}: ${r}`))] : [];
    return renderText(items, { showLibrary: true, rules: ruleLines });
  };
  return lazyRendered(() => json, text, headers);
}

/** The rules of the libraries answered, labelled as the answer labels them; null when none apply. */
function rulesOf(access: AccessPolicy, principal: Reader, returned: SearchTarget[]): SearchContextResponse['rules'] | null {
  const ids = [...new Set(returned.map((t) => t.entry.library.id))];
  const r = access.rules(principal, ids);
  const libraries = returned.map((t) => {
    const own = r.libraries.find((l) => l.libraryId === t.entry.library.id);
    return { libraryId: t.label, libraryOwn: own?.libraryOwn ?? [], libraryTeam: own?.libraryTeam ?? [] };
  });
  const any = r.global.length > 0 || libraries.some((l) => l.libraryOwn.length + l.libraryTeam.length > 0);
  return any ? { global: r.global, libraries } : null;
}
