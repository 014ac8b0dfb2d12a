import type { Candidate } from './retrieve.ts';

/**
 * Near-duplicate threshold: Jaccard similarity of word 3-gram shingles. 0.8 catches the same
 * section copied between a website and a repository (or two versions of a page) while keeping
 * sections that merely share boilerplate lines.
 */
export const NEAR_DUPLICATE_JACCARD = 0.8;

/** Dedupe keeps at most this many snippets (an answer holds at most 20; the rest is slack for the budget). */
export const DEDUPE_KEEP = 60;

/** Shingles are taken from the start of a body only (near-copies agree from their first lines; it bounds the cost per candidate). */
export const SHINGLE_CHARS = 800;

function body(c: Candidate): string {
  const s = c.snippet;
  if (s.kind !== 'code') return s.content.slice(0, SHINGLE_CHARS).toLowerCase();
  // The code blocks joined by newlines, only as far as the shingles look.
  let text = '';
  for (const x of s.codeList) {
    text = text ? `${text}\n${x.code}` : x.code;
    if (text.length >= SHINGLE_CHARS) break;
  }
  return text.slice(0, SHINGLE_CHARS).toLowerCase();
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
 * (shingle Jaccard >= NEAR_DUPLICATE_JACCARD, same kind), keeping the first, i.e. best ranked, copy.
 * Input must be sorted best first.
 */
export function dedupe(candidates: Candidate[], threshold = NEAR_DUPLICATE_JACCARD, limit = DEDUPE_KEEP): Candidate[] {
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
