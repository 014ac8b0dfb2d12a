import type { Candidate } from './retrieve.ts';

/**
 * Near-duplicate threshold: Jaccard similarity of word 3-gram shingles. 0.8 catches the same
 * section copied between a website and a repository (or two versions of a page) while keeping
 * sections that merely share boilerplate lines.
 */
export const NEAR_DUPLICATE_JACCARD = 0.8;

function normalized(c: Candidate): string {
  const s = c.snippet;
  const body = s.kind === 'code' ? s.codeList.map((x) => x.code).join('\n') : s.content;
  return body.toLowerCase().replace(/\s+/g, ' ').trim();
}

function shingles(text: string): Set<string> {
  const words = text.split(/[^a-z0-9_$]+/).filter(Boolean);
  const out = new Set<string>();
  if (words.length < 3) {
    out.add(words.join(' '));
    return out;
  }
  for (let i = 0; i + 3 <= words.length; i++) out.add(`${words[i]} ${words[i + 1]} ${words[i + 2]}`);
  return out;
}

function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  const [small, large] = a.size < b.size ? [a, b] : [b, a];
  let inter = 0;
  for (const x of small) if (large.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}

/**
 * Removes exact duplicates (same kind and same normalized code or prose) and near duplicates
 * (shingle Jaccard >= NEAR_DUPLICATE_JACCARD, same kind), keeping the first, i.e. best ranked, copy.
 * Input must be sorted best first.
 */
export function dedupe(candidates: Candidate[], threshold = NEAR_DUPLICATE_JACCARD): Candidate[] {
  const kept: { c: Candidate; sh: Set<string> }[] = [];
  const exact = new Set<string>();
  for (const c of candidates) {
    const norm = normalized(c);
    const key = `${c.snippet.kind}\u0000${norm}`;
    if (exact.has(key)) continue;
    const sh = shingles(norm);
    if (kept.some((k) => k.c.snippet.kind === c.snippet.kind && jaccard(k.sh, sh) >= threshold)) continue;
    exact.add(key);
    kept.push({ c, sh });
  }
  return kept.map((k) => k.c);
}
