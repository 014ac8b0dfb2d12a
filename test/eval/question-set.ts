/**
 * The evaluation questions: test/eval/questions/*.json (written from the documents, before any
 * result was looked at) and the older test/eval/questions.ts set, in one shape. Each question is
 * in the `dev` split (tuning may look at it) or the `blind` split (only its aggregate figures are
 * ever printed; no constant or model is chosen on it). The split is a hash of the question id, so
 * it never depends on results.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { QUESTIONS } from './questions.ts';

export const KINDS = [
  'plain',
  'paraphrase',
  'error',
  'code',
  'longform',
  'assistant',
  'overview',
  'keywords',
  'config',
  'misspelled',
  'typo',
  'libraryless',
  'language',
  'version',
  'multi',
  'offtopic',
] as const;
export type Kind = (typeof KINDS)[number];

export interface EvalItem {
  id: string;
  kind: Kind;
  query: string;
  /** The library (and version) that answers: what /api/v2/context is asked with; null for multi and off-topic. */
  libraryId: string | null;
  /** `library` values of /api/v3/search ([] = library-less). */
  library: string[];
  /** `version` parameter of /api/v3/search. */
  version?: string;
  /** Source URLs that answer (`~N` suffixes ignored; a trailing `*` matches a whole page); [] for off-topic. */
  expect: string[];
  split: 'dev' | 'blind';
  /**
   * Where it comes from: the older hand-tuned set, the written-first set, or a held-out set
   * (questions/holdout/, each written before any change it measures; all of it blind).
   */
  set: 'legacy' | 'written' | 'holdout';
  /** For a held-out question, the name of its file (`fresh`, `nov26`): each held-out set is reported on its own. */
  holdout?: string;
}

const DIR = path.join(import.meta.dirname, 'questions');
const HOLDOUT_DIR = path.join(DIR, 'holdout');

/** About a third of the written questions are blind; the legacy set tuned the old constants, so it is dev. */
export function splitOf(id: string): 'dev' | 'blind' {
  return createHash('sha256').update(id).digest()[0]! % 3 === 0 ? 'blind' : 'dev';
}

export function loadQuestions(): EvalItem[] {
  const out: EvalItem[] = [];
  QUESTIONS.forEach((q, i) => {
    out.push({
      id: `legacy-${String(i + 1).padStart(3, '0')}`,
      kind: /\/v\d|@v\d/.test(q.libraryId) ? 'version' : q.paraphrase ? 'paraphrase' : 'plain',
      query: q.question,
      libraryId: q.libraryId,
      library: [q.libraryId],
      expect: q.expect,
      split: 'dev',
      set: 'legacy',
    });
  });
  if (!fs.existsSync(DIR)) return out;
  for (const file of fs
    .readdirSync(DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const items = JSON.parse(fs.readFileSync(path.join(DIR, file), 'utf8')) as Omit<EvalItem, 'split' | 'set'>[];
    for (const q of items) {
      if (!KINDS.includes(q.kind)) throw new Error(`${file}: ${q.id} has unknown kind ${q.kind}`);
      out.push({ ...q, library: q.library ?? [], expect: q.expect ?? [], split: splitOf(q.id), set: 'written' });
    }
  }
  // A held-out set is blind as a whole: only its aggregate figures are printed.
  for (const file of fs.existsSync(HOLDOUT_DIR)
    ? fs
        .readdirSync(HOLDOUT_DIR)
        .filter((f) => f.endsWith('.json'))
        .sort()
    : []) {
    const items = JSON.parse(fs.readFileSync(path.join(HOLDOUT_DIR, file), 'utf8')) as Omit<EvalItem, 'split' | 'set'>[];
    for (const q of items) {
      if (!KINDS.includes(q.kind)) throw new Error(`holdout/${file}: ${q.id} has unknown kind ${q.kind}`);
      out.push({ ...q, library: q.library ?? [], expect: q.expect ?? [], split: 'blind', set: 'holdout', holdout: path.basename(file, '.json') });
    }
  }
  const ids = new Set<string>();
  for (const q of out) {
    if (ids.has(q.id)) throw new Error(`duplicate question id ${q.id}`);
    ids.add(q.id);
  }
  return out;
}

/** True when a returned source URL answers: same URL (without `~N`), or on an expected page (`*`). */
export function relevant(sourceId: string, expect: string[]): boolean {
  const id = sourceId.replace(/~\d+$/, '');
  return expect.some((e) => (e.endsWith('*') ? id.startsWith(e.slice(0, -1)) : id === e));
}

/** 1-based rank of the first place (a source URL, or a text block's URLs) holding a relevant source, or null. */
export function firstHit(places: readonly (string | readonly string[])[], expect: string[]): number | null {
  const i = places.findIndex((p) => (typeof p === 'string' ? [p] : p).some((s) => relevant(s, expect)));
  return i < 0 ? null : i + 1;
}

export interface Metrics {
  n: number;
  hit1: number;
  hit5: number;
  mrr10: number;
}

/** The reciprocal rank MRR@10 averages: 1/rank within the first 10, else 0. */
export function reciprocalRank(rank: number | null): number {
  return rank !== null && rank <= 10 ? 1 / rank : 0;
}

/** hit@1, hit@5 and MRR@10 of first-hit ranks (null: no relevant snippet in the first 10). */
export function summarize(ranks: (number | null)[]): Metrics {
  const n = ranks.length;
  if (n === 0) return { n, hit1: 0, hit5: 0, mrr10: 0 };
  return {
    n,
    hit1: ranks.filter((r) => r === 1).length / n,
    hit5: ranks.filter((r) => r !== null && r <= 5).length / n,
    mrr10: ranks.reduce<number>((sum, r) => sum + reciprocalRank(r), 0) / n,
  };
}
