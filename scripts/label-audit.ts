/**
 * How far `npm run eval`'s URL labels are from "a snippet that really answers it" (docs/retrieval.md,
 * "Nov 26 (morning)"). The eval counts a hit only when a snippet comes from a URL the question's
 * writer named; another section may answer as well, and a named section may not really answer.
 *
 *   node --import tsx scripts/label-audit.ts collect DIR   asks every dev on-topic question of
 *       /api/v3/search (text order) and writes, for a judge who sees neither URLs nor labels, the
 *       served first five of: every miss, 40 hits, and 40 decoys (a question shown with another
 *       question's first five from the same library), shuffled by hash, in DIR/part1-4.txt, with
 *       DIR/JUDGE.md (the instructions) and DIR/key.json (what each item is: not for the judge);
 *   node --import tsx scripts/label-audit.ts score DIR     reads the judge's DIR/judged*.jsonl.
 *
 * The decoys and the hits tell how lenient and how strict the judge is. Blind and held-out
 * questions are never asked.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { requestPath, startEvalServer, textBlocks } from '../test/eval/http.ts';
import { TEXT_SEPARATOR } from '../server/search/render.ts';
import { firstHit, loadQuestions, type EvalItem } from '../test/eval/question-set.ts';

const PARTS = 4;
const SAMPLE = 40;

interface Served {
  q: EvalItem;
  blocks: string[];
  /** 1-based rank of the first labelled snippet, null when none in the answer. */
  rank: number | null;
}

interface KeyRow {
  item: number;
  type: 'miss' | 'hit' | 'decoy';
  id: string;
  kind: string;
  rank: number | null;
}

interface Verdict {
  item: number;
  answers: number[];
  partial: number[];
}

const JUDGE = `Judge each item of your part file blindly (open no other file of the audit). An item gives the library
a question was asked of (or "all libraries"), the QUESTION and up to five SNIPPETS a search returned.
For each snippet: ANSWERS when a developer reading it would know what to do or get the explanation
asked for (the API, option, configuration, command or explanation that solves it, for the library
asked about); PARTIAL when it gives a real part of the answer or answers it for another library or
version; NO when it is merely on the topic or answers another question. Sharing words is not enough.
Write judgedN.jsonl (N = your part), one line per item in order:
{"item": 12, "answers": [2], "partial": [1, 4], "note": "one short sentence"}
`;

const hash = (s: string) => createHash('sha256').update(s).digest('hex');

async function serve(): Promise<Served[]> {
  const server = await startEvalServer();
  const served: Served[] = [];
  try {
    for (const q of loadQuestions().filter((x) => x.split === 'dev' && x.set !== 'holdout' && x.kind !== 'offtopic')) {
      const res = await server.api(requestPath('search', 'txt', q)!, { auth: null });
      const body = res.ok ? await res.text() : (await res.body?.cancel(), '');
      const blocks = body
        .split(TEXT_SEPARATOR)
        .filter((b) => /^Source: /m.test(b))
        .slice(0, 5);
      served.push({ q, blocks, rank: firstHit(textBlocks(body), q.expect) });
    }
  } finally {
    await server.close();
  }
  return served.filter((s) => s.blocks.length > 0);
}

function itemText(n: number, q: EvalItem, blocks: string[]): string {
  const asked =
    q.kind !== 'libraryless' && q.libraryId
      ? `ASKED OF LIBRARY: ${q.libraryId}${q.version ? ` version ${q.version}` : ''}`
      : 'ASKED OF: all libraries (no library given)';
  // The judge sees no URL: a snippet is judged by what it says.
  const snippets = blocks.map(
    (b, k) => `=== SNIPPET ${k + 1} ===\n${(b.length > 1800 ? `${b.slice(0, 1800)}\n[... cut]` : b).replace(/^(?:Source|Context): .*$/gm, '')}`,
  );
  return [`######## ITEM ${n}`, asked, `QUESTION: ${q.query}`, ...snippets].join('\n');
}

async function collect(dir: string): Promise<void> {
  const served = await serve();
  const byHash = (salt: string) => (a: Served, b: Served) => hash(salt + a.q.id).localeCompare(hash(salt + b.q.id));
  const misses = served.filter((s) => s.rank === null || s.rank > 5);
  const hits = served
    .filter((s) => s.rank !== null && s.rank <= 5)
    .sort(byHash('hit'))
    .slice(0, SAMPLE);
  const pool = served.filter((s) => s.q.libraryId).sort(byHash('decoy'));
  const decoys: { q: EvalItem; blocks: string[] }[] = [];
  for (const a of pool) {
    if (decoys.length >= SAMPLE) break;
    const other = pool.find(
      (b) =>
        b !== a &&
        b.q.libraryId === a.q.libraryId &&
        firstHit(
          b.blocks.flatMap((x) => textBlocks(x)),
          a.q.expect,
        ) === null,
    );
    if (other) decoys.push({ q: a.q, blocks: other.blocks });
  }
  const items = [
    ...misses.map((s) => ({ type: 'miss' as const, q: s.q, blocks: s.blocks, rank: s.rank })),
    ...hits.map((s) => ({ type: 'hit' as const, q: s.q, blocks: s.blocks, rank: s.rank })),
    ...decoys.map((d) => ({ type: 'decoy' as const, q: d.q, blocks: d.blocks, rank: null })),
  ].sort((a, b) => hash(a.type + a.q.id).localeCompare(hash(b.type + b.q.id)));
  fs.mkdirSync(dir, { recursive: true });
  const key: KeyRow[] = items.map((it, i) => ({ item: i + 1, type: it.type, id: it.q.id, kind: it.q.kind, rank: it.rank }));
  fs.writeFileSync(path.join(dir, 'key.json'), JSON.stringify(key, null, 1));
  fs.writeFileSync(path.join(dir, 'JUDGE.md'), JUDGE);
  for (let p = 0; p < PARTS; p++) {
    const mine = items.map((it, i) => itemText(i + 1, it.q, it.blocks)).filter((_, i) => i % PARTS === p);
    fs.writeFileSync(path.join(dir, `part${p + 1}.txt`), mine.join('\n\n'));
  }
  console.log(`${misses.length} misses, ${hits.length} hits, ${decoys.length} decoys in ${dir}/part1-${PARTS}.txt; instructions in JUDGE.md`);
}

function score(dir: string): void {
  const key: KeyRow[] = JSON.parse(fs.readFileSync(path.join(dir, 'key.json'), 'utf8'));
  const verdicts = new Map<number, Verdict>();
  for (const f of fs.readdirSync(dir).filter((f) => /^judged\d+\.jsonl$/.test(f))) {
    for (const line of fs
      .readFileSync(path.join(dir, f), 'utf8')
      .split('\n')
      .filter((l) => l.trim())) {
      const v = JSON.parse(line) as Verdict;
      verdicts.set(v.item, v);
    }
  }
  const unjudged = key.filter((k) => !verdicts.has(k.item)).length;
  if (unjudged) console.log(`${unjudged} items have no verdict`);
  const rows = new Map<string, { n: number; answered: number; partialOnly: number; labelled: number }>();
  const add = (name: string, k: KeyRow, v: Verdict) => {
    const r = rows.get(name) ?? { n: 0, answered: 0, partialOnly: 0, labelled: 0 };
    r.n++;
    if (v.answers.length) r.answered++;
    else if (v.partial.length) r.partialOnly++;
    if (k.rank !== null && v.answers.includes(k.rank)) r.labelled++;
    rows.set(name, r);
  };
  for (const k of key) {
    const v = verdicts.get(k.item);
    if (!v) continue;
    add(k.type, k, v);
    if (k.type === 'miss') add(`miss ${k.kind}`, k, v);
  }
  console.log('items                  n  answered  partial only  labelled snippet answers');
  for (const [name, r] of [...rows].sort()) {
    console.log(
      `${name.padEnd(20)} ${String(r.n).padStart(3)}  ${String(r.answered).padStart(8)}  ${String(r.partialOnly).padStart(12)}  ${name === 'hit' ? String(r.labelled).padStart(8) : ''}`,
    );
  }
}

const [command, dir] = process.argv.slice(2);
if (command === 'collect' && dir) await collect(dir);
else if (command === 'score' && dir) score(dir);
else {
  console.error('usage: node --import tsx scripts/label-audit.ts collect|score DIR');
  process.exit(2);
}
