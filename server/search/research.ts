import type { Store } from '../store/index.ts';
import type { Embedder } from '../embed/types.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { StoredSnippet } from '../model.ts';
import { countTokens } from '../ingest/tokens.ts';
import { analyzeQuery, prepareQuery, stem, type PreparedQuery } from './query.ts';
import { answerForVersion } from './pipeline.ts';
import type { Candidate } from './retrieve.ts';
import { renderSnippetText } from './render.ts';
import { wordsOf } from './text.ts';

/**
 * researchMode: a deeper pipeline that answers with ONE synthesized info snippet. Several
 * sub-queries derived from the question are retrieved and fused; then either an OpenAI-compatible
 * chat model (config.chatUrl) writes the answer from those snippets only, or, offline, the answer
 * is composed extractively from their best sentences. Both cite the source URLs as [n].
 */
export const RESEARCH = {
  maxSubQueries: 4,
  /** Snippets kept as sources after fusing the sub-queries. */
  sources: 8,
  /** Sentences in an extractive answer. */
  sentences: 8,
  /** Tokens of source text sent to a chat model. */
  chatContextTokens: 6000,
  chatTimeoutMs: 60_000,
} as const;

export interface ResearchDeps {
  store: Store;
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
  const key = analyzeQuery(question).terms.slice(0, 6).join(' ');
  if (key && !out.some((o) => o.toLowerCase() === key)) out.push(key);
  return out.slice(0, RESEARCH.maxSubQueries);
}

/** Prepares (embeds) the sub-queries of a question; do this before opening a read snapshot. */
export async function prepareResearch(question: string, embedder: Embedder | null): Promise<PreparedQuery[]> {
  const out: PreparedQuery[] = [];
  for (const sq of subQueries(question)) out.push(await prepareQuery(sq, embedder));
  return out;
}

/** Retrieves every sub-query with the full pipeline and fuses the lists by reciprocal rank (k = 60). Synchronous: run it in one snapshot. */
export function gatherSources(store: Store, versionId: number, libraryId: string, queries: PreparedQuery[]): Candidate[] {
  const pool = new Map<number, { c: Candidate; score: number }>();
  for (const q of queries) {
    const list = answerForVersion(store, q, versionId, { libraryId, unpacked: true }).slice(0, 20);
    list.forEach((c, i) => {
      const e = pool.get(c.snippet.id);
      const add = 1 / (60 + i + 1);
      if (e) e.score += add;
      else pool.set(c.snippet.id, { c, score: add });
    });
  }
  return [...pool.values()].sort((a, b) => b.score - a.score).slice(0, RESEARCH.sources).map((e) => e.c);
}

function sentencesOf(s: StoredSnippet): string[] {
  const text = s.kind === 'code' ? s.description : s.content;
  return text
    .replace(/```[\s\S]*?```/g, ' ')
    .split(/(?<=[.!?])\s+(?=[A-Z`(\[])|\n{2,}|\n(?=[-*] )/)
    .map((x) => x.replace(/\s+/g, ' ').replace(/^[-*#>\s]+/, '').trim())
    .filter((x) => x.length >= 25 && x.length <= 600 && /[a-z]/i.test(x));
}

/** Offline synthesis: the sentences that cover the question best, each cited, plus the best code example. */
function extractive(question: string, sources: Candidate[]): string {
  const qStems = new Set(analyzeQuery(question).terms.map(stem));
  const scored: { text: string; cite: number; score: number; stems: Set<string> }[] = [];
  sources.forEach((c, i) => {
    for (const sentence of sentencesOf(c.snippet)) {
      const st = new Set(wordsOf(sentence).map(stem));
      let hit = 0;
      for (const t of qStems) if (st.has(t)) hit++;
      const coverage = qStems.size ? hit / qStems.size : 0;
      // Earlier (better ranked) sources count more; a sentence with no question term is unlikely to answer.
      scored.push({ text: sentence, cite: i + 1, score: coverage + 0.3 / (i + 1), stems: st });
    }
  });
  scored.sort((a, b) => b.score - a.score);
  const chosen: typeof scored = [];
  for (const s of scored) {
    if (chosen.length >= RESEARCH.sentences) break;
    // Skip sentences that mostly repeat one already chosen.
    const dup = chosen.some((c) => {
      let inter = 0;
      for (const w of s.stems) if (c.stems.has(w)) inter++;
      return inter / Math.max(1, Math.min(s.stems.size, c.stems.size)) > 0.7;
    });
    if (!dup) chosen.push(s);
  }
  chosen.sort((a, b) => a.cite - b.cite);
  const lines = [`Answer composed from the documentation for: ${question.trim()}`, '', ...chosen.map((s) => `- ${s.text} [${s.cite}]`)];
  const codeIdx = sources.findIndex((c) => c.snippet.kind === 'code' && c.snippet.codeList.length > 0);
  if (codeIdx >= 0) {
    const code = sources[codeIdx]!.snippet;
    const ex = code.codeList[0]!;
    lines.push('', `Example: ${code.title} [${codeIdx + 1}]`, '', `\`\`\`${ex.language}\n${ex.code.replace(/\n+$/, '')}\n\`\`\``);
  }
  return lines.join('\n');
}

function sourcesBlock(sources: Candidate[]): string {
  return ['Sources:', ...sources.map((c, i) => `[${i + 1}] ${c.snippet.sourceId}`)].join('\n');
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
  sources.forEach((c, i) => {
    const text = renderSnippetText(c);
    const t = c.snippet.tokens;
    if (blocks.length > 0 && used + t > RESEARCH.chatContextTokens) return;
    used += t;
    blocks.push(`[${i + 1}] ${text}`);
  });
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
    signal: AbortSignal.timeout(RESEARCH.chatTimeoutMs),
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
    id: 0, versionId, kind: 'info', sourceId: sources[0]?.snippet.sourceId ?? '', title: `Research: ${question.trim()}`, description: '', language: '',
    pageTitle: 'Research', breadcrumb: `Research: ${question.trim()}`, content, codeList: [], tokens: countTokens(content), contentHash: '', position: 0,
    isDynamic: false, sourceFile: null,
  };
  return { snippet, sources: sources.map((c) => c.snippet.sourceId), fallback, mode };
}
