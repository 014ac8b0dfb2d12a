import type { Candidate } from './retrieve.ts';
import { TUNING } from './tuning.ts';

/** The start of a body the shingles are taken from (TUNING.dedupe.shingleChars). */
function body(c: Candidate): string {
  const chars = TUNING.dedupe.shingleChars;
  const s = c.snippet;
  if (s.kind !== 'code') return s.content.slice(0, chars).toLowerCase();
  // The code blocks joined by newlines, only as far as the shingles look.
  let text = '';
  for (const x of s.codeList) {
    text = text ? `${text}\n${x.code}` : x.code;
    if (text.length >= chars) break;
  }
  return text.slice(0, chars).toLowerCase();
}

/**
 * Word 3-gram shingles, hashed to numbers (cheaper sets than strings). Words are runs of
 * [a-z0-9_$] (the text is lower case), each hashed with 32-bit FNV-1a in one pass over the text:
 * this runs for every candidate of every answer.
 */
function shingles(text: string): Set<number> {
  const out = new Set<number>();
  let h = 0x811c9dc5;
  let inWord = false;
  let w0 = 0;
  let w1 = 0;
  let words = 0;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 32;
    if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 95 || c === 36) {
      h = Math.imul(h ^ c, 0x01000193);
      inWord = true;
      continue;
    }
    if (!inWord) continue;
    const w = h >>> 0;
    h = 0x811c9dc5;
    inWord = false;
    if (words >= 2) out.add((Math.imul(Math.imul(w0, 31) ^ w1, 31) ^ w) >>> 0);
    w0 = w1;
    w1 = w;
    words++;
  }
  // Under three words: one shingle of them all.
  if (words < 3) out.add(words === 0 ? 0 : words === 1 ? Math.imul(w1, 0x01000193) >>> 0 : Math.imul(Math.imul(w0, 0x01000193) ^ w1, 0x01000193) >>> 0);
  return out;
}

/**
 * True when the Jaccard similarity of two sets reaches t. J >= t needs an intersection of at least
 * t(a+b)/(1+t), so the scan of the smaller set stops as soon as too many of its elements are
 * missing: unrelated snippets are rejected after a few lookups.
 */
function similarAtLeast(a: Set<number>, b: Set<number>, t: number): boolean {
  if (a.size === 0 || b.size === 0) return false;
  const [small, large] = a.size < b.size ? [a, b] : [b, a];
  const need = Math.ceil((t * (a.size + b.size)) / (1 + t));
  if (need > small.size) return false;
  let missesLeft = small.size - need;
  for (const x of small) {
    if (!large.has(x) && --missesLeft < 0) return false;
  }
  return true;
}

/**
 * Removes exact duplicates (same kind and content hash) and near duplicates
 * (shingle Jaccard >= TUNING.dedupe.nearDuplicateJaccard, same kind), keeping the first, i.e. best
 * ranked, copy, up to TUNING.dedupe.keep snippets. Input must be sorted best first.
 */
export function dedupe(candidates: Candidate[], threshold: number = TUNING.dedupe.nearDuplicateJaccard, limit: number = TUNING.dedupe.keep): Candidate[] {
  const kept: { c: Candidate; sh: Set<number> }[] = [];
  const exact = new Set<string>();
  for (const c of candidates) {
    // Only the head of the list can reach an answer; stop comparing once enough are kept.
    if (kept.length >= limit) break;
    // Exact copies share their content hash (the writer hashes title, description and code, or the prose).
    const key = `${c.snippet.kind}\u0000${c.snippet.contentHash}`;
    if (exact.has(key)) continue;
    const sh = shingles(body(c));
    if (kept.some((k) => k.c.snippet.kind === c.snippet.kind && similarAtLeast(k.sh, sh, threshold))) continue;
    exact.add(key);
    kept.push({ c, sh });
  }
  return kept.map((k) => k.c);
}
