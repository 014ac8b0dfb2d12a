import type { Candidate } from './retrieve.ts';
import { byScore } from './retrieve.ts';
import { stem, type PreparedQuery } from './query.ts';
import { DEFAULT_WEIGHTS } from './ranker-defaults.ts';
import { sectionOf } from './source-url.ts';
import { asksAboutChange, isChangePage } from './change-pages.ts';
import { TUNING } from './tuning.ts';

/**
 * The ranking function: a linear model over features of each candidate, its score turned into a
 * probability of answering the question by Platt scaling. The weights are learned from each
 * library version's own documents (server/search/learn.ts, the `search-model` job); a version
 * without a learned model uses DEFAULT_WEIGHTS, learned the same way from the reference corpora of
 * test/fixtures/corpus (`node --import tsx scripts/learn-default-ranker.ts`). See docs/retrieval.md.
 */
export const FEATURES = [
  /** bm25 / best bm25 of the version's candidates (0 when no query term occurs). */
  'lexical',
  /** 1 / log2(1 + rank) in the BM25 list, 0 outside it. */
  'lexicalRank',
  /** Cosine similarity of the embeddings, min-max scaled over the version's candidates. */
  'similarity',
  /** 1 / log2(1 + rank) in the vector list, 0 outside it. */
  'vectorRank',
  /** The length-normalized lexical score (bm25.ts lexicalScan) / the best of the version's candidates. */
  'cosine',
  /** The best `lexical` of any candidate of the same section (URL#anchor): evidence spread over a section lifts it. */
  'section',
  /** Share of the question's terms found in the title, heading path or page title (idf-weighted over the candidates). */
  'title',
  /** Share of the question's terms found anywhere in the snippet (idf-weighted the same way). */
  'coverage',
  /** The question's longest run of content words ("custom error handler") appears verbatim. */
  'phrase',
  /** Share of the identifiers named in the question found verbatim. */
  'identifier',
  /** Code for a how-to question, prose for a what/why question: +0.5, the other way -0.5, else 0. */
  'kind',
  /** Code in a language the question names: +0.5, another language -0.5, else 0. */
  'language',
  /** Tokens and description length: one-liners score low. */
  'substance',
] as const;

export type Feature = (typeof FEATURES)[number];

/** Bump when FEATURES or the learning change: stored models of another format are learned again. */
export const MODEL_FORMAT = 6;

/** Weights in FEATURES order and the Platt scaling of their weighted sum. */
export interface Weights {
  weights: number[];
  /** Probability that a candidate answers: 1 / (1 + exp(-(a * score + b))). */
  calibration: { a: number; b: number };
}

/**
 * A ranking model. `weights` rank a question put in the asker's words; with a sentence encoder they
 * were also learned from headings without their words (server/search/learn.ts). `quoted`, when
 * present, ranks a question that quotes the documents (pasted error output or code): learned from
 * the headings as written only, it trusts the shared words as such a question deserves.
 */
export interface RankingModel extends Weights {
  quoted?: Weights;
  /** Pages the version's headings tell as change pages (`HeadingRoots`); the default model knows none. */
  changePages?: ReadonlySet<string>;
}

export const DEFAULT_MODEL: RankingModel = DEFAULT_WEIGHTS;

/** A model as the `search-model` job stores it: what it learned and how it validated. */
export interface LearnedModel extends Weights {
  quoted?: Weights;
  /** Change pages by their headings (`HeadingRoots`), sorted. */
  changePages: string[];
  /** Packages the version's documents install (server/search/package-names.ts), sorted: the catalogue names the library by some of them. */
  packages: string[];
  /** 'default': the learned weights did not rank held-out headings better, so the default weights are kept (with this version's calibration). */
  source: 'learned' | 'default';
  report: {
    questions: number;
    heldOut: number;
    /** MRR@10 of the section on the held-out headings, with the default and with the learned weights. */
    defaultMrr: number;
    learnedMrr: number;
  };
}

const NEUTRAL_LANGUAGES = new Set([
  '',
  'bash',
  'sh',
  'shell',
  'console',
  'text',
  'txt',
  'json',
  'jsonc',
  'yaml',
  'yml',
  'toml',
  'ini',
  'diff',
  'plaintext',
  'markdown',
  'md',
]);

/**
 * True when a term occurs in a lower-cased text: as a substring at a word start, or anywhere for
 * terms of 4+ letters, so the parts of compound identifiers count (`error` in `seterrorhandler`)
 * without tokenizing every candidate (the ranker's hot path).
 */
function occurs(t: string, text: string): boolean {
  let i = text.indexOf(t);
  while (i >= 0 && t.length < 4 && i > 0 && /[a-z0-9]/.test(text[i - 1]!)) i = text.indexOf(t, i + 1);
  return i >= 0;
}

interface Texts {
  head: string;
  body: string;
}

/** A candidate's headings and text, lower case, as the features (and the "nothing found" decision) read it. */
export function searchableText(c: Candidate): string {
  return textsOf(c).body;
}

function textsOf(c: Candidate): Texts {
  const s = c.snippet;
  const head = `${s.title} ${s.breadcrumb} ${s.pageTitle}`.toLowerCase();
  const text = s.kind === 'code' ? `${s.title}\n${s.description}\n${s.codeList.map((x) => x.code).join('\n')}` : s.content;
  return { head, body: `${head}\n${text.toLowerCase()}` };
}

/** Whitespace-separated words of a text, counted up to `cap` (the substance feature saturates there). */
function countWords(text: string, cap: number): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < text.length && n < cap; i++) {
    const c = text.charCodeAt(i);
    const space =
      c === 32 ||
      (c >= 9 && c <= 13) ||
      c === 160 ||
      c === 0x2028 ||
      c === 0x2029 ||
      c === 0xfeff ||
      (c >= 0x2000 && c <= 0x200a) ||
      c === 0x1680 ||
      c === 0x202f ||
      c === 0x205f ||
      c === 0x3000;
    if (space) inWord = false;
    else if (!inWord) {
      inWord = true;
      n++;
    }
  }
  return n;
}

/**
 * Feature vectors (FEATURES order) of one version's candidates for a question. Relative features
 * (scaled by the best or the range) are relative to these candidates, as when the model was learned.
 */
export function featureRows(q: PreparedQuery, candidates: Candidate[]): number[][] {
  if (candidates.length === 0) return [];
  const texts = candidates.map(textsOf);
  const terms = [...new Set(q.terms.map(stem))];
  const n = candidates.length;
  const termWeights = terms.map((t) => {
    let df = 0;
    for (const x of texts) if (occurs(t, x.body)) df++;
    return Math.log(1 + n / (1 + df));
  });
  const share = (text: string) => {
    let hit = 0;
    let total = 0;
    terms.forEach((t, i) => {
      total += termWeights[i]!;
      if (occurs(t, text)) hit += termWeights[i]!;
    });
    return total > 0 ? hit / total : 0;
  };
  let simMin = Infinity;
  let simMax = -Infinity;
  let bestCosine = 0;
  const sectionBest = new Map<string, number>();
  for (const c of candidates) {
    if (c.similarity !== null) {
      simMin = Math.min(simMin, c.similarity);
      simMax = Math.max(simMax, c.similarity);
    }
    bestCosine = Math.max(bestCosine, c.cosine);
    const sec = sectionOf(c.snippet.sourceId);
    sectionBest.set(sec, Math.max(sectionBest.get(sec) ?? 0, c.lexical));
  }
  const span = simMax - simMin;
  const r = TUNING.ranker;
  const identifiers = q.identifiers.map((id) => id.toLowerCase());
  return candidates.map((c, i) => {
    const s = c.snippet;
    const t = texts[i]!;
    const kind = q.codeIntent === 0 ? 0 : q.codeIntent > 0 === (s.kind === 'code') ? r.kindCue : -r.kindCue;
    let language = 0;
    if (q.languages.length && s.kind === 'code') {
      const lang = s.language.toLowerCase();
      language = q.languages.includes(lang) ? r.languageCue : NEUTRAL_LANGUAGES.has(lang) ? 0 : -r.languageCue;
    }
    const words = countWords(s.kind === 'code' ? s.description : s.content, r.substanceWords);
    return [
      c.lexical,
      c.lexicalRank !== null ? 1 / Math.log2(1 + c.lexicalRank) : 0,
      c.similarity === null ? 0 : span > 1e-6 ? (c.similarity - simMin) / span : 0,
      c.vectorRank !== null ? 1 / Math.log2(1 + c.vectorRank) : 0,
      bestCosine > 0 ? c.cosine / bestCosine : 0,
      sectionBest.get(sectionOf(s.sourceId)) ?? 0,
      share(t.head),
      share(t.body),
      q.phrase && t.body.includes(q.phrase) ? 1 : 0,
      identifiers.length ? identifiers.filter((id) => t.body.includes(id)).length / identifiers.length : 0,
      kind,
      language,
      Math.min(1, s.tokens / r.substanceTokens) * 0.5 + Math.min(1, words / r.substanceWords) * 0.5,
    ];
  });
}

/** The model's weighted sum for one feature vector. */
export function linearScore(model: Weights, x: number[]): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += (model.weights[i] ?? 0) * x[i]!;
  return s;
}

export function probability(model: Weights, score: number): number {
  return 1 / (1 + Math.exp(-(model.calibration.a * score + model.calibration.b)));
}

export interface RankOptions {
  /** fast=true: keep the fused order, compute nothing. */
  fast?: boolean;
  /** The model of a version (its learned one, else DEFAULT_MODEL). */
  modelOf?: (versionId: number) => RankingModel;
}

/**
 * Orders candidates by the probability that they answer the question. Candidates of several
 * versions (a search across libraries) get their features within their own version's candidates
 * and their score from their own version's model; the calibrated probabilities are comparable.
 */
export function rank(q: PreparedQuery, candidates: Candidate[], opts: RankOptions = {}): Candidate[] {
  if (opts.fast || candidates.length === 0) return [...candidates].sort(byScore);
  const groups = new Map<number, Candidate[]>();
  for (const c of candidates) {
    const g = groups.get(c.snippet.versionId);
    if (g) g.push(c);
    else groups.set(c.snippet.versionId, [c]);
  }
  const out: Candidate[] = [];
  for (const [versionId, group] of groups) {
    const model = opts.modelOf?.(versionId) ?? DEFAULT_MODEL;
    const weights = model.quoted && q.quotes ? model.quoted : model;
    const rows = featureRows(q, group);
    const changePrior = asksAboutChange(q) ? 1 : TUNING.ranker.changePagePrior;
    const changePages = changePrior < 1 && model.changePages?.size ? model.changePages : null;
    group.forEach((c, i) => {
      const x = rows[i]!;
      const features: Record<string, number> = {};
      FEATURES.forEach((f, k) => (features[f] = x[k]!));
      let p = probability(weights, linearScore(weights, x));
      if (changePrior < 1 && isChangePage(c.snippet, changePages)) p *= changePrior;
      out.push({ ...c, score: c.snippet.isDynamic ? p * TUNING.dynamic.penalty : p, features });
    });
  }
  return out.sort(byScore);
}
