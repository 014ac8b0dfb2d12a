import type { Candidate } from './retrieve.ts';
import { byScore } from './retrieve.ts';
import { stem, type PreparedQuery } from './query.ts';

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
  /** Share of the question's terms found in the title, heading path or page title (idf-weighted over the candidates). */
  title: 0.15,
  /** Share of the question's terms found anywhere in the snippet (idf-weighted over the candidates). */
  coverage: 0.15,
  /** The question's longest run of content words ("custom error handler") appears verbatim in the snippet. */
  phrase: 0.1,
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

/**
 * True when a term occurs in a lower-cased text: as a substring at a word start, or anywhere for
 * terms of 4+ letters, so the parts of compound identifiers count (`error` in `seterrorhandler`)
 * without tokenizing every candidate (the reranker's hot path).
 */
function occurs(t: string, text: string): boolean {
  let i = text.indexOf(t);
  while (i >= 0 && t.length < 4 && i > 0 && /[a-z0-9]/.test(text[i - 1]!)) i = text.indexOf(t, i + 1);
  return i >= 0;
}

function snippetText(c: Candidate): string {
  const s = c.snippet;
  return s.kind === 'code' ? `${s.title}\n${s.description}\n${s.codeList.map((x) => x.code).join('\n')}` : s.content;
}

/** What the reranker needs to know about the candidate set as a whole. */
export interface RerankContext {
  simRange: { min: number; max: number };
  bestFused: number;
  /** The question's term stems and their weights: idf over the candidates (a term in few of them tells them apart). */
  terms: string[];
  weights: number[];
}

interface Texts {
  head: string;
  body: string;
}

function textsOf(c: Candidate): Texts {
  const s = c.snippet;
  const head = `${s.title} ${s.breadcrumb} ${s.pageTitle}`.toLowerCase();
  return { head, body: `${head}\n${snippetText(c).toLowerCase()}` };
}

function weightedShare(ctx: RerankContext, text: string): number {
  let hit = 0;
  let total = 0;
  ctx.terms.forEach((t, i) => {
    total += ctx.weights[i]!;
    if (occurs(t, text)) hit += ctx.weights[i]!;
  });
  return total > 0 ? hit / total : 0;
}

/** Builds the set-level context: similarity range, best fused score, idf weights of the question's terms. */
export function rerankContext(q: PreparedQuery, candidates: Candidate[], texts: Texts[] = candidates.map(textsOf)): RerankContext {
  const sims = candidates.map((c) => c.similarity).filter((x): x is number => x !== null);
  const terms = [...new Set(q.terms.map(stem))];
  const n = candidates.length;
  const weights = terms.map((t) => {
    let df = 0;
    for (const x of texts) if (occurs(t, x.body)) df++;
    return Math.log(1 + n / (1 + df));
  });
  return {
    simRange: sims.length ? { min: Math.min(...sims), max: Math.max(...sims) } : { min: 0, max: 0 },
    bestFused: Math.max(0, ...candidates.map((c) => c.fused)),
    terms,
    weights,
  };
}

/** Whitespace-separated words of a text, counted up to `cap` (the substance feature saturates there). */
function countWords(text: string, cap: number): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < text.length && n < cap; i++) {
    const c = text.charCodeAt(i);
    const space = c === 32 || (c >= 9 && c <= 13) || c === 160 || c === 0x2028 || c === 0x2029 || c === 0xfeff || (c >= 0x2000 && c <= 0x200a) || c === 0x1680 || c === 0x202f || c === 0x205f || c === 0x3000;
    if (space) inWord = false;
    else if (!inWord) {
      inWord = true;
      n++;
    }
  }
  return n;
}

/** Feature values of one candidate for a question (exported for explanations and tests). */
export function features(q: PreparedQuery, c: Candidate, ctx: RerankContext, texts: Texts = textsOf(c)): Record<keyof typeof RERANK_WEIGHTS, number> {
  const s = c.snippet;
  const identifier = q.identifiers.length ? q.identifiers.filter((id) => texts.body.includes(id.toLowerCase())).length / q.identifiers.length : 0;
  let similarity = 0;
  if (c.similarity !== null) {
    const span = ctx.simRange.max - ctx.simRange.min;
    similarity = span > 1e-6 ? (c.similarity - ctx.simRange.min) / span : c.similarity;
  }
  const kind = q.codeIntent === 0 ? 0.5 : (q.codeIntent > 0) === (s.kind === 'code') ? 1 : 0;
  let language = 0.5;
  if (q.languages.length && s.kind === 'code') {
    const lang = s.language.toLowerCase();
    language = q.languages.includes(lang) ? 1 : NEUTRAL_LANGUAGES.has(lang) ? 0.5 : 0;
  }
  const words = countWords(s.kind === 'code' ? s.description : s.content, 15);
  const substance = Math.min(1, s.tokens / 60) * 0.5 + Math.min(1, words / 15) * 0.5;
  return {
    lexical: c.lexical,
    similarity,
    title: weightedShare(ctx, texts.head),
    coverage: weightedShare(ctx, texts.body),
    phrase: q.phrase && texts.body.includes(q.phrase) ? 1 : 0,
    identifier,
    kind,
    language,
    substance,
    fused: ctx.bestFused > 0 ? c.fused / ctx.bestFused : 0,
  };
}

/**
 * Reorders candidates by a weighted sum of features (no language model). fast=true returns them
 * in fused order untouched. Works across libraries: every feature is relative to its own list or absolute.
 */
export function rerank(q: PreparedQuery, candidates: Candidate[], opts: RerankOptions = {}): Candidate[] {
  if (opts.fast || candidates.length === 0) return [...candidates].sort(byScore);
  const w = { ...RERANK_WEIGHTS, ...opts.weights };
  const texts = candidates.map(textsOf);
  const ctx = rerankContext(q, candidates, texts);
  const out = candidates.map((c, i) => {
    const f = features(q, c, ctx, texts[i]);
    const score =
      w.lexical * f.lexical +
      w.similarity * f.similarity +
      w.title * f.title +
      w.coverage * f.coverage +
      w.phrase * f.phrase +
      w.identifier * f.identifier +
      w.kind * (f.kind - 0.5) +
      w.language * (f.language - 0.5) +
      w.substance * f.substance +
      w.fused * f.fused;
    return { ...c, score, features: f };
  });
  return out.sort(byScore);
}
