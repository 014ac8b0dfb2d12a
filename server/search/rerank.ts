import type { Candidate } from './retrieve.ts';
import { byScore } from './retrieve.ts';
import { stem, type PreparedQuery } from './query.ts';
import { wordsOf } from './text.ts';

/**
 * Weights of the transparent reranker (documented in docs/retrieval.md). Every feature lies in
 * [0, 1]; kind and language fit are centred on 0.5 so that "no opinion" moves nothing.
 * Chosen on test/eval (hybrid + rerank vs hybrid), not fitted per question.
 */
export const RERANK_WEIGHTS = {
  /** bm25 relative to the best lexical hit of the same version. */
  lexical: 0.2,
  /** Cosine similarity, min-max scaled over the candidates. */
  similarity: 0.25,
  /** Share of the question's terms found in the title, heading path or page title. */
  title: 0.15,
  /** Share of the question's terms found anywhere in the snippet. */
  coverage: 0.15,
  /** Share of the identifiers named in the question found verbatim in the snippet. */
  identifier: 0.12,
  /** Code snippet for a how-to question, prose for a what/why question (centred). */
  kind: 0.06,
  /** Code in a language the question names (centred). */
  language: 0.04,
  /** Snippets too short to answer anything (a one-line command with a one-word description) are ranked down. */
  substance: 0.05,
  /** The fused RRF score, scaled by the best one: keeps the agreement of the two lists. */
  fused: 0.1,
} as const;

export interface RerankOptions {
  /** fast=true: keep the fused order, compute nothing. */
  fast?: boolean;
  weights?: Partial<Record<keyof typeof RERANK_WEIGHTS, number>>;
}

const NEUTRAL_LANGUAGES = new Set(['', 'bash', 'sh', 'shell', 'console', 'text', 'txt', 'json', 'jsonc', 'yaml', 'yml', 'toml', 'ini', 'diff', 'plaintext', 'markdown', 'md']);

function stems(words: string[]): Set<string> {
  const out = new Set<string>();
  for (const w of words) out.add(stem(w));
  return out;
}

function share(terms: string[], present: Set<string>): number {
  if (terms.length === 0) return 0;
  let n = 0;
  for (const t of terms) if (present.has(t)) n++;
  return n / terms.length;
}

function snippetText(c: Candidate): string {
  const s = c.snippet;
  return s.kind === 'code' ? `${s.title}\n${s.description}\n${s.codeList.map((x) => x.code).join('\n')}` : s.content;
}

/** Feature values of one candidate for a question (exported for explanations and tests). */
export function features(q: PreparedQuery, c: Candidate, simRange: { min: number; max: number }, bestFused: number): Record<keyof typeof RERANK_WEIGHTS, number> {
  const s = c.snippet;
  const qStems = [...new Set(q.terms.map(stem))];
  const headWords = stems(wordsOf(`${s.title} ${s.breadcrumb} ${s.pageTitle}`));
  const text = snippetText(c);
  const bodyWords = stems(wordsOf(text));
  for (const w of headWords) bodyWords.add(w);
  const lowerText = `${s.title}\n${text}`.toLowerCase();
  const identifier = q.identifiers.length ? q.identifiers.filter((id) => lowerText.includes(id.toLowerCase())).length / q.identifiers.length : 0;

  let similarity = 0;
  if (c.similarity !== null) {
    const span = simRange.max - simRange.min;
    similarity = span > 1e-6 ? (c.similarity - simRange.min) / span : c.similarity;
  }
  const kind = q.codeIntent === 0 ? 0.5 : (q.codeIntent > 0) === (s.kind === 'code') ? 1 : 0;
  let language = 0.5;
  if (q.languages.length && s.kind === 'code') {
    const lang = s.language.toLowerCase();
    language = q.languages.includes(lang) ? 1 : NEUTRAL_LANGUAGES.has(lang) ? 0.5 : 0;
  }
  const words = s.kind === 'code' ? s.description.split(/\s+/).filter(Boolean).length : s.content.split(/\s+/).filter(Boolean).length;
  const substance = Math.min(1, s.tokens / 60) * 0.5 + Math.min(1, words / 15) * 0.5;
  return {
    lexical: c.lexical,
    similarity,
    title: share(qStems, headWords),
    coverage: share(qStems, bodyWords),
    identifier,
    kind,
    language,
    substance,
    fused: bestFused > 0 ? c.fused / bestFused : 0,
  };
}

/**
 * Reorders candidates by a weighted sum of features (no language model). fast=true returns them
 * in fused order untouched. Works across libraries: every feature is relative to its own list or absolute.
 */
export function rerank(q: PreparedQuery, candidates: Candidate[], opts: RerankOptions = {}): Candidate[] {
  if (opts.fast || candidates.length === 0) return [...candidates].sort(byScore);
  const w = { ...RERANK_WEIGHTS, ...opts.weights };
  const sims = candidates.map((c) => c.similarity).filter((x): x is number => x !== null);
  const simRange = sims.length ? { min: Math.min(...sims), max: Math.max(...sims) } : { min: 0, max: 0 };
  const bestFused = Math.max(...candidates.map((c) => c.fused));
  const out = candidates.map((c) => {
    const f = features(q, c, simRange, bestFused);
    const score =
      w.lexical * f.lexical +
      w.similarity * f.similarity +
      w.title * f.title +
      w.coverage * f.coverage +
      w.identifier * f.identifier +
      w.kind * (f.kind - 0.5) +
      w.language * (f.language - 0.5) +
      w.substance * f.substance +
      w.fused * f.fused;
    return { ...c, score, features: f };
  });
  return out.sort(byScore);
}
