/**
 * The held-out sets read by a judge, as the issue's independent set was scored ("a snippet that
 * really answers it"), beside `npm run eval`'s reading by listed addresses. `--judge-pack DIR`
 * writes the questions to judge: every on-topic held-out question whose first snippet is not one
 * of the addresses its writer listed, with the first five snippets `/api/v3/search` returns (text
 * order). A reader (a person, or a session that sees nothing else) writes `verdicts*.json` beside
 * it: `[{ "id", "first": 1-5 or null }]`, the first snippet that on its own answers. `--judge-score
 * DIR` prints both readings per set. See docs/retrieval.md, "Nov 29".
 */
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { summarize, type Metrics } from './question-set.ts';

export interface PackEntry {
  id: string;
  /** The held-out set. */
  set: string;
  /** Rank of the first listed address in the answer (null: none in the first ten). */
  urlRank: number | null;
  /** Only for the entries to judge (urlRank !== 1). */
  query?: string;
  library?: string[];
  expect?: string[];
  snippets?: { rank: number; text: string }[];
  /**
   * SHA-256 of each of the `snippets`, in order: what a verdict was given for, kept when a pack is
   * stored without the texts. A verdict holds while the blocks up to the one it names are the same.
   */
  blockHashes?: string[];
}

export interface Verdict {
  id: string;
  first: number | null;
}

/** The snippets of a text answer (they are separated by a line of dashes), the first five, each cut at `chars`. */
export function firstSnippets(body: string, chars = 1800): { rank: number; text: string }[] {
  return body
    .split(/\n-{20,}\n/)
    .slice(0, 5)
    .map((t, i) => ({ rank: i + 1, text: t.trim().slice(0, chars) }));
}

/**
 * Both readings per set. A question whose first snippet is a listed address counts as answered
 * first, unread; for the others the judge's rank counts, or, when the judge found no answer in the
 * first five, the listed address's rank if it is 6-10 (the judge read only five). Rows are per
 * held-out set unless `groupOf` groups otherwise (by kind of question, say), then one for all.
 */
export function judgedFigures(
  entries: PackEntry[],
  verdicts: Verdict[],
  groupOf: (e: PackEntry) => string = (e) => e.set,
): { set: string; n: number; byAddress: Metrics; byJudge: Metrics; unjudged: number }[] {
  const first = new Map(verdicts.map((v) => [v.id, v.first]));
  const sets = [...new Set(entries.map(groupOf))].sort();
  return [...sets, 'all'].map((set) => {
    const rows = entries.filter((e) => set === 'all' || groupOf(e) === set);
    let unjudged = 0;
    const judged = rows.map((e) => {
      if (e.urlRank === 1) return 1;
      if (!first.has(e.id)) {
        unjudged++;
        return e.urlRank;
      }
      const j = first.get(e.id) ?? null;
      return j ?? (e.urlRank !== null && e.urlRank > 5 ? e.urlRank : null);
    });
    return { set, n: rows.length, byAddress: summarize(rows.map((e) => e.urlRank)), byJudge: summarize(judged), unjudged };
  });
}

/** Reads a pack directory's entries and every verdicts*.json in it. */
export function readJudged(dir: string): { entries: PackEntry[]; verdicts: Verdict[] } {
  const entries = JSON.parse(fs.readFileSync(path.join(dir, 'pack.json'), 'utf8')) as PackEntry[];
  const verdicts = fs
    .readdirSync(dir)
    .filter((f) => /^verdicts.*\.json$/.test(f))
    .sort()
    .flatMap((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as Verdict[]);
  return { entries, verdicts };
}

/** The hash of each block a judge reads. */
export function blockHashes(snippets: { rank: number; text: string }[]): string[] {
  return snippets.map((s) => createHash('sha256').update(s.text).digest('hex'));
}

/** A pack without the questions and answer texts (ids, ranks and hashes): small enough to commit beside its verdicts. */
export function compactPack(pack: PackEntry[]): PackEntry[] {
  return pack.map((e) =>
    e.snippets
      ? { id: e.id, set: e.set, urlRank: e.urlRank, blockHashes: e.blockHashes ?? blockHashes(e.snippets) }
      : { id: e.id, set: e.set, urlRank: e.urlRank },
  );
}

/**
 * A new pack read against an earlier one: a question whose first five snippets are exactly those
 * an earlier judge read keeps that judge's verdict, and so does one whose blocks up to the one the
 * judge named as the first answer are the same (the blocks before it still do not answer, it still
 * does; what follows it does not count). The others (new questions, answers judged unanswered that
 * changed, or changed at or before the answer) are the ones to judge again.
 */
export function carryOver(pack: PackEntry[], earlier: { entries: PackEntry[]; verdicts: Verdict[] }): { reused: Verdict[]; toJudge: PackEntry[] } {
  const before = new Map(earlier.entries.map((e) => [e.id, e]));
  const verdicts = new Map(earlier.verdicts.map((v) => [v.id, v]));
  const blocksOf = (x: PackEntry | undefined) => x?.blockHashes ?? (x?.snippets ? blockHashes(x.snippets) : undefined);
  const reused: Verdict[] = [];
  const toJudge: PackEntry[] = [];
  for (const e of pack) {
    if (e.urlRank === 1) continue;
    const old = before.get(e.id);
    const verdict = verdicts.get(e.id);
    const was = blocksOf(old);
    const now = e.snippets && blockHashes(e.snippets);
    // The blocks that must be unchanged: up to the answer the judge named, else all of them.
    const upTo = verdict?.first ?? Math.max(was?.length ?? 0, now?.length ?? 0);
    const alike = !!was && !!now && was.length >= upTo && now.length >= upTo && was.slice(0, upTo).every((h, i) => h === now[i]);
    if (verdict && alike) reused.push(verdict);
    else toJudge.push(e);
  }
  return { reused, toJudge };
}

export function formatJudged(
  rows: ReturnType<typeof judgedFigures>,
  heading = 'hit@1 % / hit@5 % / MRR@10 of /api/v3/search (text order): by listed address | by the judge',
): string {
  const pct = (m: Metrics) => `${(m.hit1 * 100).toFixed(1)} / ${(m.hit5 * 100).toFixed(1)} / ${m.mrr10.toFixed(3)}`;
  return [
    heading,
    ...rows.map(
      (r) => `${`${r.set} (${r.n})`.padEnd(18)} ${pct(r.byAddress).padEnd(22)} | ${pct(r.byJudge)}${r.unjudged ? `  (${r.unjudged} not judged yet)` : ''}`,
    ),
  ].join('\n');
}
