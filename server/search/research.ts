import type { Store } from '../store/index.ts';
import type { Embedder } from '../embed/types.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { StoredSnippet } from '../../lib/model.ts';
import { countTokens } from '../ingest/tokens.ts';
import { analyzeQuery, prepareQuery, stem, type PreparedQuery } from './query.ts';
import { answerStep } from './pipeline.ts';
import { runSync, type Step } from './read-steps.ts';
import { sqliteVersionReads, type VersionReads } from '../store/version-reads.ts';
import type { Candidate } from './retrieve.ts';
import { renderSnippetText } from './render.ts';
import { wordsOf } from './text.ts';
import { TUNING } from './tuning.ts';

/**
 * researchMode: a deeper pipeline that answers with ONE synthesized info snippet. Several
 * sub-queries derived from the question are retrieved and fused; then either an OpenAI-compatible
 * chat model (config.chatUrl) writes the answer from those snippets only, or, offline, the answer
 * is composed extractively from their best sentences. Both cite the source URLs as [n].
 * Its settings: TUNING.research.
 */

/** How long a chat model may take to answer. */
const CHAT_TIMEOUT_MS = 60_000;

export interface ResearchDeps {
  embedder: Embedder | null;
  config: Config;
  log: Logger;
  fetch: typeof fetch;
}

export interface ResearchResult {
  snippet: StoredSnippet;
  sources: string[];
  /** True when the chat model failed and the extractive answer was given instead. */
  fallback: boolean;
  mode: 'extractive' | 'chat';
}

/** The question itself, its clauses (split on ?, ;, "and", commas) and its key terms alone. */
export function subQueries(question: string): string[] {
  const out = [question.trim()];
  const clauses = question
    .split(/[?;]|,|\band\b|\balso\b|\bthen\b/i)
    .map((s) => s.trim())
    .filter((s) => analyzeQuery(s).terms.length >= 2);
  for (const c of clauses) if (!out.some((o) => o.toLowerCase() === c.toLowerCase())) out.push(c);
  const key = analyzeQuery(question).terms.slice(0, TUNING.research.keyTerms).join(' ');
  if (key && !out.some((o) => o.toLowerCase() === key)) out.push(key);
  return out.slice(0, TUNING.research.maxSubQueries);
}

/** Prepares (embeds) the sub-queries of a question; do this before opening a read snapshot. */
export async function prepareResearch(question: string, embedder: Embedder | null): Promise<PreparedQuery[]> {
  const out: PreparedQuery[] = [];
  for (const sq of subQueries(question)) out.push(await prepareQuery(sq, embedder));
  return out;
}

/** Retrieves every sub-query with the full pipeline and fuses the lists by reciprocal rank. Synchronous: run it in one snapshot. */
export function gatherSources(store: Store, versionId: number, libraryId: string, queries: PreparedQuery[]): Candidate[] {
  return runSync(gatherSourcesStep(sqliteVersionReads(store), versionId, libraryId, queries));
}

/** gatherSources over either backend's reads (server/store/version-reads.ts); run it inside the backend's read snapshot. */
export function* gatherSourcesStep(reads: VersionReads, versionId: number, libraryId: string, queries: PreparedQuery[]): Step<Candidate[]> {
  const pool = new Map<number, { c: Candidate; score: number }>();
  for (const q of queries) {
    const list = (yield* answerStep(reads, q, { versionId, libraryId }, { unpacked: true })).slice(0, TUNING.research.perQuery);
    list.forEach((c, i) => {
      const e = pool.get(c.snippet.id);
      const add = 1 / (TUNING.research.rrfK + i + 1);
      if (e) e.score += add;
      else pool.set(c.snippet.id, { c, score: add });
    });
  }
  return [...pool.values()]
    .sort((a, b) => b.score - a.score)
    .slice(0, TUNING.research.sources)
    .map((e) => e.c);
}

function sentencesOf(s: StoredSnippet): string[] {
  const text = s.kind === 'code' ? s.description : s.content;
  return (
    text
      .replace(/```[\s\S]*?```/g, ' ')
      .split(/(?<=[.!?])\s+(?=[A-Z`(\[])|\n{2,}|\n(?=[-*] )/)
      .map((x) =>
        x
          .replace(/\s+/g, ' ')
          .replace(/^[-*#>\s]+/, '')
          .trim(),
      )
      // Fragments that only introduce a list or a code block ("... will not catch:") say nothing alone.
      .filter((x) => x.length >= TUNING.research.minSentenceChars && x.length <= TUNING.research.maxSentenceChars && /[a-z]/i.test(x) && !/:$/.test(x))
  );
}

/** Citation numbers by source URL: snippets of one URL (a section's prose and code) share a number. */
export function citationNumbers(sources: Candidate[]): { urls: string[]; numberOf: (c: Candidate) => number } {
  const urls: string[] = [];
  const index = new Map<string, number>();
  for (const c of sources) {
    if (!index.has(c.snippet.sourceId)) {
      urls.push(c.snippet.sourceId);
      index.set(c.snippet.sourceId, urls.length);
    }
  }
  return { urls, numberOf: (c) => index.get(c.snippet.sourceId)! };
}

/**
 * Offline synthesis: for each part of the question in turn (its clauses, or the whole question),
 * the best not yet chosen sentence of the sources, each cited; then the best code example.
 */
function extractive(question: string, sources: Candidate[]): string {
  const { numberOf } = citationNumbers(sources);
  const parts = subQueries(question).slice(1, -1);
  const aspects = (parts.length ? parts : [question]).map((p) => new Set(analyzeQuery(p).terms.map(stem)));
  const all = sources.flatMap((c, rank) => sentencesOf(c.snippet).map((text) => ({ text, cite: numberOf(c), rank, stems: new Set(wordsOf(text).map(stem)) })));
  // Terms found in many sentences (log, line) say less about an aspect than rare ones (redact): idf weights.
  const df = new Map<string, number>();
  for (const x of all) for (const w of x.stems) df.set(w, (df.get(w) ?? 0) + 1);
  const idf = (t: string) => Math.log(1 + all.length / (1 + (df.get(t) ?? 0)));
  const cover = (st: Set<string>, terms: Set<string>) => {
    let hit = 0;
    let total = 0;
    for (const t of terms) {
      total += idf(t);
      if (st.has(t)) hit += idf(t);
    }
    return total ? hit / total : 0;
  };
  const chosen: typeof all = [];
  const used = new Set<string>();
  const repeats = (x: (typeof all)[number]) =>
    chosen.some((c) => {
      let inter = 0;
      for (const w of x.stems) if (c.stems.has(w)) inter++;
      return inter / Math.max(1, Math.min(x.stems.size, c.stems.size)) > TUNING.research.repeatOverlap;
    });
  for (let round = 0; chosen.length < TUNING.research.sentences && round < TUNING.research.sentences; round++) {
    let added = false;
    for (const terms of aspects) {
      if (chosen.length >= TUNING.research.sentences) break;
      // Better ranked sources count more; a sentence without any question term is unlikely to answer.
      const best = all
        .filter((x) => !used.has(x.text) && cover(x.stems, terms) > 0)
        .map((x) => ({ x, score: cover(x.stems, terms) + TUNING.research.rankBonus / (x.rank + 1) }))
        .sort((a, b) => b.score - a.score)
        .find(({ x }) => !repeats(x));
      if (!best) continue;
      used.add(best.x.text);
      chosen.push(best.x);
      added = true;
    }
    if (!added) break;
  }
  chosen.sort((a, b) => a.cite - b.cite || a.rank - b.rank);
  const lines = [`Answer composed from the documentation for: ${question.trim()}`, '', ...chosen.map((s) => `- ${s.text} [${s.cite}]`)];
  const code = sources.find((c) => c.snippet.kind === 'code' && c.snippet.codeList.some((x) => !/^(text|txt|plaintext)?$/i.test(x.language)));
  if (code) {
    const ex = code.snippet.codeList.find((x) => !/^(text|txt|plaintext)?$/i.test(x.language))!;
    lines.push('', `Example: ${code.snippet.title} [${numberOf(code)}]`, '', `\`\`\`${ex.language}\n${ex.code.replace(/\n+$/, '')}\n\`\`\``);
  }
  return lines.join('\n');
}

function sourcesBlock(sources: Candidate[]): string {
  return ['Sources:', ...citationNumbers(sources).urls.map((url, i) => `[${i + 1}] ${url}`)].join('\n');
}

/** The chat completions URL of a configured endpoint (a base URL, a /v1 URL, or the full path). */
export function chatCompletionsUrl(chatUrl: string): string {
  const u = chatUrl.replace(/\/+$/, '');
  if (/\/chat\/completions$/.test(u)) return u;
  if (/\/v1$/.test(u)) return `${u}/chat/completions`;
  return `${u}/v1/chat/completions`;
}

async function chat(deps: ResearchDeps, question: string, sources: Candidate[]): Promise<string> {
  let used = 0;
  const blocks: string[] = [];
  const { numberOf } = citationNumbers(sources);
  for (const c of sources) {
    const t = c.snippet.tokens;
    if (blocks.length > 0 && used + t > TUNING.research.chatContextTokens) continue;
    used += t;
    blocks.push(`[${numberOf(c)}] ${renderSnippetText(c)}`);
  }
  const body = {
    model: deps.config.chatModel,
    temperature: 0,
    messages: [
      {
        role: 'system',
        content:
          'You answer questions about software documentation. Use ONLY the numbered documentation snippets given. ' +
          'Cite every statement with the snippet number in brackets, like [1]. If the snippets do not answer the question, say so. ' +
          'Include short code examples from the snippets where they help.',
      },
      { role: 'user', content: `Documentation snippets:\n\n${blocks.join('\n\n')}\n\nQuestion: ${question}` },
    ],
  };
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (deps.config.chatApiKey) headers.authorization = `Bearer ${deps.config.chatApiKey}`;
  const res = await deps.fetch(chatCompletionsUrl(deps.config.chatUrl!), {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(CHAT_TIMEOUT_MS),
  });
  if (!res.ok) throw new Error(`chat endpoint answered ${res.status}`);
  const data = (await res.json()) as { choices?: { message?: { content?: string } }[] };
  const content = data.choices?.[0]?.message?.content?.trim();
  if (!content) throw new Error('chat endpoint returned no content');
  return content;
}

/** Composes the one research answer from sources gathered by gatherSources. */
export async function synthesize(deps: ResearchDeps, versionId: number, libraryId: string, question: string, sources: Candidate[]): Promise<ResearchResult> {
  let body: string;
  let mode: ResearchResult['mode'] = 'extractive';
  let fallback = false;
  if (sources.length === 0) {
    body = `No documentation in ${libraryId} matched: ${question.trim()}`;
  } else if (deps.config.chatUrl) {
    try {
      body = await chat(deps, question, sources);
      mode = 'chat';
    } catch (err) {
      deps.log.warn({ err: (err as Error).message }, 'research: chat endpoint failed, answering extractively');
      body = extractive(question, sources);
      fallback = true;
    }
  } else {
    body = extractive(question, sources);
  }
  const content = sources.length ? `${body}\n\n${sourcesBlock(sources)}` : body;
  const snippet: StoredSnippet = {
    id: 0,
    versionId,
    kind: 'info',
    sourceId: sources[0]?.snippet.sourceId ?? '',
    title: `Research: ${question.trim()}`,
    description: '',
    language: '',
    pageTitle: 'Research',
    breadcrumb: `Research: ${question.trim()}`,
    content,
    codeList: [],
    tokens: countTokens(content),
    contentHash: '',
    position: 0,
    isDynamic: false,
    sourceFile: null,
  };
  return { snippet, sources: citationNumbers(sources).urls, fallback, mode };
}
