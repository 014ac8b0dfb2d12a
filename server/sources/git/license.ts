import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

/**
 * The SPDX identifier of a repository's license, from its LICENSE file: an explicit
 * `SPDX-License-Identifier:` line, else the closest of the common licenses' texts bundled with
 * spdx-license-list (CC0-1.0, the SPDX License List's texts), compared as sets of word pairs
 * (Dice coefficient) after leaving out copyright lines; else the `license` field of a
 * package.json. Null when nothing matches well enough.
 */
const CANDIDATES = [
  'MIT',
  'MIT-0',
  'Apache-2.0',
  'BSD-2-Clause',
  'BSD-3-Clause',
  '0BSD',
  'ISC',
  'GPL-2.0-only',
  'GPL-3.0-only',
  'LGPL-2.1-only',
  'LGPL-3.0-only',
  'AGPL-3.0-only',
  'MPL-2.0',
  'EPL-1.0',
  'EPL-2.0',
  'Unlicense',
  'CC0-1.0',
  'CC-BY-4.0',
  'BSL-1.0',
  'Zlib',
  'Artistic-2.0',
  'BlueOak-1.0.0',
  'UPL-1.0',
  'PostgreSQL',
  'WTFPL',
];
/** Files holding the license, tried in order. */
export const LICENSE_FILES = /^(licen[cs]e|copying|unlicense)(\.(md|txt|rst))?$/i;
const THRESHOLD = 0.8;

let texts: { id: string; pairs: Set<string> }[] | null = null;

function candidates(): { id: string; pairs: Set<string> }[] {
  if (texts) return texts;
  const dir = path.join(path.dirname(createRequire(import.meta.url).resolve('spdx-license-list/package.json')), 'licenses');
  texts = CANDIDATES.map((id) => ({
    id,
    pairs: pairsOf((JSON.parse(fs.readFileSync(path.join(dir, `${id}.json`), 'utf8')) as { licenseText: string }).licenseText),
  }));
  return texts;
}

function pairsOf(text: string): Set<string> {
  const words = text
    .split('\n')
    .filter((l) => !/^\s*(copyright\b|\(c\)|©|all rights reserved)/i.test(l))
    .join(' ')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
    .split(' ')
    .filter(Boolean);
  const out = new Set<string>();
  for (let i = 1; i < words.length; i++) out.add(`${words[i - 1]} ${words[i]}`);
  return out;
}

/** The SPDX identifier a license text matches, or null. */
export function matchLicense(text: string): string | null {
  const explicit = /SPDX-License-Identifier:\s*([A-Za-z0-9.+-]+(?:\s+(?:OR|AND|WITH)\s+[A-Za-z0-9.+-]+)*)/.exec(text);
  if (explicit) return explicit[1]!;
  const pairs = pairsOf(text);
  if (pairs.size < 5) return null;
  let best: { id: string; score: number } | null = null;
  for (const c of candidates()) {
    let shared = 0;
    for (const p of pairs) if (c.pairs.has(p)) shared++;
    const score = (2 * shared) / (pairs.size + c.pairs.size);
    if (!best || score > best.score) best = { id: c.id, score };
  }
  return best && best.score >= THRESHOLD ? best.id : null;
}

/** Detects a checked-out repository's license from its root files. */
export function detectLicense(dir: string, rootFiles: string[]): string | null {
  for (const name of rootFiles.filter((f) => !f.includes('/') && LICENSE_FILES.test(f)).sort()) {
    const id = matchLicense(fs.readFileSync(path.join(dir, name), 'utf8').slice(0, 200_000));
    if (id) return id;
  }
  if (rootFiles.includes('package.json')) {
    try {
      const license = (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { license?: unknown }).license;
      if (typeof license === 'string' && /^[A-Za-z0-9.+-]+$/.test(license) && license !== 'UNLICENSED') return license;
    } catch {
      /* not JSON */
    }
  }
  return null;
}
