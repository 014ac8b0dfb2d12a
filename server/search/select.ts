import type { Logger } from '../log.ts';
import type { Reader } from '../../lib/model.ts';
import { OWN_DOCS_ID, parseLibraryId } from '../../lib/model.ts';
import type { AccessPolicy } from './answer-types.ts';
import { defaultVersion, servable, type CatalogEntry, type CatalogReads } from './catalog.ts';
import { normalizeName, scoreName, typedName } from './names.ts';
import type { Question } from './query.ts';
import { isLatest } from './versions.ts';
import { VERSION_PATTERN } from '../contracts/search.ts';
import type { VersionProbe } from '../store/search-probe.ts';
import type { SearchReads } from '../store/version-reads.ts';
import { runSync, wait, type Step } from './read-steps.ts';
import { TUNING } from './tuning.ts';

/** At most this many libraries answer one search (spec: up to four). */
export const MAX_LIBRARIES = 4;

export interface LibraryChoice {
  entry: CatalogEntry;
  /** Version asked for this library (tag on the value, else the version parameter); null = current documentation. */
  requested: string | null;
  /** Why this library was chosen (debug log, eval). */
  reason: string;
  /** The library value it came from; null when inferred from the question. */
  from: string | null;
}

export interface Selection {
  choices: LibraryChoice[];
  /** Library-less: how many products the question names (the version applies only when exactly one). */
  named: number;
  /** True when a `version` parameter was given but could not apply (library-less question naming several or no products). */
  versionIgnored: boolean;
}

export interface RankedLibrary {
  entry: CatalogEntry;
  score: number;
  reason: string;
}

/** A library value split into what names the library and the version tag, if any. */
export function parseLibraryValue(value: string): { id: string | null; name: string; tag: string | null } {
  const v = value.trim();
  if (v.startsWith('/')) {
    const parsed = parseLibraryId(v);
    if (parsed) {
      const [, owner = '', repo = ''] = parsed.id.split('/');
      return { id: parsed.id, name: productNameOf(owner, repo), tag: parsed.tag };
    }
    return { id: null, name: v.replace(/^\/+|(?<!\/)\/+$/g, '').replace(/\//g, ' '), tag: null };
  }
  const at = /^(.+?)@([^@\s/]+)$/.exec(v);
  if (at && VERSION_PATTERN.test(at[2]!)) return { id: null, name: at[1]!.trim(), tag: at[2]! };
  // `name 4.2`: the last word is a version (found from the end: `^(.+?)\s+v$` backtracks over long runs of spaces).
  const spaced = /\s([vV]?\d+(?:[._]\d+){0,2}(?:[-+][A-Za-z0-9.-]+)?)$/.exec(v);
  if (spaced) return { id: null, name: v.slice(0, spaced.index).trim(), tag: spaced[1]! };
  return { id: null, name: v, tag: null };
}

const GENERIC_REPOS = new Set(['website', 'docs', 'documentation', 'site', 'www', 'handbook', 'guide', 'monorepo']);

/** The product name of a library ID: its repository, or its owner when the repository name is generic (`/honojs/website`). */
function productNameOf(owner: string, repo: string): string {
  return GENERIC_REPOS.has(normalizeName(repo)) ? owner : repo;
}

/** What selection reads of a request: the question (analysed at most once, Question), the library values, the version. */
export interface SelectionRequest {
  question: Question;
  libraries: string[];
  version?: string;
}

/** What selection reads besides the catalogue: the full-text probes (server/store/search-probe.ts). */
export type ProbeReads = Pick<SearchReads, 'topVersions' | 'versionScore' | 'documentFrequencies'>;

/**
 * Chooses the libraries a search answers from: exact IDs, fuzzy product names, or the question
 * itself. Every candidate passes the access policy first, so a library the caller may not see is
 * never chosen, named or inferred. What reads the index is written once as steps (read-steps.ts):
 * the methods without `Step` run them at once, for SQLite's reads; on PostgreSQL the caller runs the
 * steps with runAsync inside its read snapshot, over the view of the catalogue that snapshot read.
 */
export class LibrarySelector {
  constructor(
    private readonly catalog: CatalogReads,
    private readonly reads: ProbeReads,
    private readonly access: AccessPolicy,
    private readonly log: Logger,
  ) {}

  /** Libraries the caller may see that have something to serve. */
  visible(principal: Reader): CatalogEntry[] {
    return this.catalog.all().filter((e) => servable(e) && this.access.canSee(principal, e.library));
  }

  /**
   * Libraries matching a typed name, best first: name score, then (within a close band) how well
   * their documents match the question, then trust, stars and size.
   */
  rankByName(name: string, principal: Reader, question: Question | null, minScore: number = TUNING.selection.nameThreshold): RankedLibrary[] {
    return runSync(this.rankByNameStep(name, principal, question, minScore));
  }

  *rankByNameStep(name: string, principal: Reader, question: Question | null, minScore: number = TUNING.selection.nameThreshold): Step<RankedLibrary[]> {
    const ranked: RankedLibrary[] = [];
    const typed = typedName(name);
    for (const entry of this.visible(principal)) {
      const m = scoreName(typed, entry.keys, entry.library);
      if (m.score >= minScore) ranked.push({ entry, score: m.score, reason: m.reason });
    }
    return yield* this.breakTiesStep(ranked, question);
  }

  /** Orders by name score; libraries within TUNING.selection.tieBand of each other are ordered by document relevance to the question. */
  breakTies(ranked: RankedLibrary[], question: Question | null): RankedLibrary[] {
    return runSync(this.breakTiesStep(ranked, question));
  }

  *breakTiesStep(ranked: RankedLibrary[], question: Question | null): Step<RankedLibrary[]> {
    ranked.sort((a, b) => b.score - a.score || popularity(b.entry) - popularity(a.entry));
    if (ranked.length < 2 || !question) return ranked;
    const { tieBand, tieLibraries, tieRows, tieClose } = TUNING.selection;
    const top = ranked[0]!.score;
    const band = ranked.filter((r) => top - r.score < tieBand);
    if (band.length < 2) return ranked;
    const match = question.analysis.match;
    const relevance = new Map<RankedLibrary, number>();
    for (const r of band.slice(0, tieLibraries)) {
      const v = defaultVersion(r.entry);
      relevance.set(r, v && match ? (yield* wait(this.reads.versionScore(v.id, match, tieRows))).score : 0);
    }
    const head = [...relevance.keys()].sort((a, b) =>
      Math.abs(a.score - b.score) > tieClose ? b.score - a.score : relevance.get(b)! - relevance.get(a)! || popularity(b.entry) - popularity(a.entry),
    );
    const rest = ranked.filter((r) => !relevance.has(r));
    return [...head, ...rest];
  }

  /**
   * The libraries a search request answers from, with the version asked of each. `probed`: the
   * rows of the whole-index probe of `probeMatchFor`, when the caller ran it elsewhere (a retrieval worker).
   */
  select(req: SelectionRequest, principal: Reader, probed?: VersionProbe[]): Selection {
    return runSync(this.selectStep(req, principal, probed));
  }

  *selectStep(req: SelectionRequest, principal: Reader, probed?: VersionProbe[]): Step<Selection> {
    const version = req.version && !isLatest(req.version) ? req.version : null;
    const choices: LibraryChoice[] = [];
    const taken = new Set<string>();
    const push = (c: LibraryChoice) => {
      const key = `${c.entry.library.id}\u0000${c.requested ?? ''}`;
      if (taken.has(key) || choices.length >= MAX_LIBRARIES) return;
      taken.add(key);
      choices.push(c);
    };

    if (req.libraries.length > 0) {
      for (const value of req.libraries) {
        const chosen = yield* this.resolveValueStep(value, principal, req.question);
        if (!chosen) {
          this.log.debug({ value }, 'search: library value matched no library');
          continue;
        }
        const tag = chosen.tag !== null && !isLatest(chosen.tag) ? chosen.tag : null;
        const requested = chosen.tag !== null ? tag : version;
        push({ entry: chosen.entry, requested, reason: chosen.reason, from: value });
      }
      this.logChoices(req.question.text, choices);
      return { choices, named: choices.length, versionIgnored: false };
    }

    // No library values: the products the question names, in the order it names them.
    const mentions = this.mentions(req.question.text, principal);
    mentions.sort((a, b) => a.at - b.at || popularity(b.entry) - popularity(a.entry));
    // Several libraries answering to one mention (same name): keep the best of them.
    const byAt = new Map<number, { at: number; entry: CatalogEntry; reason: string }[]>();
    for (const m of mentions) byAt.set(m.at, [...(byAt.get(m.at) ?? []), m]);
    for (const group of byAt.values()) {
      const best = group.length === 1 ? group[0]! : yield* this.bestOfSameNameStep(group, req.question);
      if (!taken.has(`${best.entry.library.id}\u0000`) && !choices.some((c) => c.entry === best.entry)) {
        push({ entry: best.entry, requested: null, reason: best.reason, from: null });
      }
    }
    const named = choices.length;
    if (named === 1 && version) choices[0]!.requested = version;
    if (named === 0)
      for (const p of yield* this.probeStep(req.question, principal, probed)) push({ entry: p.entry, requested: null, reason: p.reason, from: null });
    this.logChoices(req.question.text, choices);
    return { choices, named, versionIgnored: version !== null && named !== 1 };
  }

  /** The one library a request gives or its question names (the index is not probed); null when none or several. */
  soleNamed(req: SelectionRequest, principal: Reader): CatalogEntry | null {
    return runSync(this.soleNamedStep(req, principal));
  }

  *soleNamedStep(req: SelectionRequest, principal: Reader): Step<CatalogEntry | null> {
    const { choices } = yield* this.selectStep(req, principal, []);
    return choices.length === 1 ? choices[0]!.entry : null;
  }

  private mentions(query: string, principal: Reader): { at: number; entry: CatalogEntry; reason: string }[] {
    const out: { at: number; entry: CatalogEntry; reason: string }[] = [];
    for (const [entry, m] of this.catalog.mentions().find(query)) {
      // The instance's own documentation answers when asked by name (library=stacks), never because a question says "stacks".
      if (servable(entry) && entry.library.id !== OWN_DOCS_ID && this.access.canSee(principal, entry.library)) out.push({ at: m.at, entry, reason: m.reason });
    }
    return out;
  }

  /**
   * The FTS5 match of the whole-index probe a library-less request will need (its question names
   * no library the caller can see), or null when it needs none. The probe is the costly part of
   * such a request; the search service runs it on a retrieval worker and passes it to select().
   */
  probeMatchFor(req: Pick<SelectionRequest, 'question' | 'libraries'>, principal: Reader): string | null {
    if (req.libraries.length > 0 || this.mentions(req.question.text, principal).length > 0) return null;
    return runSync(this.probeMatchStep(req.question));
  }

  private *bestOfSameNameStep(
    group: { at: number; entry: CatalogEntry; reason: string }[],
    question: Question,
  ): Step<{ at: number; entry: CatalogEntry; reason: string }> {
    const ranked = yield* this.breakTiesStep(
      group.map((g) => ({ entry: g.entry, score: 1, reason: g.reason })),
      question,
    );
    const first = ranked[0]!;
    return group.find((g) => g.entry === first.entry)!;
  }

  /** An exact library ID (served as is when it has documentation), else the best library for the product name. */
  private *resolveValueStep(value: string, principal: Reader, question: Question): Step<{ entry: CatalogEntry; tag: string | null; reason: string } | null> {
    const parsed = parseLibraryValue(value);
    if (parsed.id) {
      const entry = this.catalog.get(parsed.id);
      if (entry && servable(entry) && this.access.canSee(principal, entry.library)) return { entry, tag: parsed.tag, reason: `exact ID ${entry.library.id}` };
      const why = !entry ? 'not indexed' : !servable(entry) ? 'has nothing to serve' : 'not visible to the caller';
      this.log.debug({ value, why }, 'search: exact library ID falls back to its product name');
      const [, owner = '', repo = ''] = parsed.id.split('/');
      const names = [...new Set([parsed.name, repo, owner])];
      for (const name of names) {
        const ranked = (yield* this.rankByNameStep(name, principal, question)).filter((r) => r.entry !== entry);
        if (ranked.length) return { entry: ranked[0]!.entry, tag: parsed.tag, reason: `${parsed.id} ${why}; product name "${name}": ${ranked[0]!.reason}` };
      }
      return null;
    }
    const ranked = yield* this.rankByNameStep(parsed.name, principal, question);
    if (!ranked.length) return null;
    return { entry: ranked[0]!.entry, tag: parsed.tag, reason: `product name "${parsed.name}": ${ranked[0]!.reason}` };
  }

  /**
   * Libraries whose current documentation matches the question best: one BM25 query over the
   * whole index with the question's rarest words (up to TUNING.selection.probeTerms, while together they match at
   * most probeDocBudget snippets): rare words say the most about which library is meant, and
   * scoring a word costs in proportion to the snippets that hold it. `probed`: that query's rows, run elsewhere.
   */
  probe(question: Question, principal: Reader, probed?: VersionProbe[]): RankedLibrary[] {
    return runSync(this.probeStep(question, principal, probed));
  }

  *probeStep(question: Question, principal: Reader, probed?: VersionProbe[]): Step<RankedLibrary[]> {
    let found = probed;
    if (!found) {
      const match = yield* this.probeMatchStep(question);
      found = match ? yield* wait(this.reads.topVersions(match, TUNING.selection.probeRows, TUNING.selection.probePerVersion)) : [];
    }
    const scores = new Map<CatalogEntry, number>();
    for (const p of found) {
      const entry = this.catalog.ofVersion(p.versionId);
      if (!entry || entry.library.id === OWN_DOCS_ID || defaultVersion(entry)?.id !== p.versionId || !this.access.canSee(principal, entry.library)) continue;
      scores.set(entry, (scores.get(entry) ?? 0) + p.score);
    }
    const ranked = [...scores].sort((a, b) => b[1] - a[1]);
    if (!ranked.length) return [];
    const best = ranked[0]![1];
    return ranked
      .filter(([, s]) => s >= TUNING.selection.probeShare * best)
      .slice(0, MAX_LIBRARIES)
      .map(([entry, s]) => ({ entry, score: s / best, reason: `documents match the question (${Math.round((100 * s) / best)}% of the best)` }));
  }

  /** The probe's FTS5 expression: the question's rarest words that fit the document budget; null when none is indexed. */
  private *probeMatchStep(question: Question): Step<string | null> {
    // Plain numbers (line:column of stack traces, ports) say nothing about a library.
    const terms = [...new Set(question.analysis.terms.filter((t) => /^[a-z0-9]+$/.test(t) && !/^\d+$/.test(t)))].slice(0, TUNING.selection.probeWords);
    const df = yield* wait(this.reads.documentFrequencies(terms));
    if (df.size === 0) return null;
    // Scoring a word costs in proportion to how many snippets hold it, and the rarest words say
    // most about which library is meant: take words rarest first while their snippets fit the budget.
    const byRarity = [...df].sort((a, b) => a[1] - b[1]);
    const chosen: string[] = [];
    let docs = 0;
    const { probeTerms, probeDocBudget } = TUNING.selection;
    for (const [term, n] of byRarity) {
      if (chosen.length >= probeTerms || (chosen.length > 0 && docs + n > probeDocBudget)) break;
      chosen.push(`"${term}"`);
      docs += n;
    }
    return chosen.join(' OR ');
  }

  private logChoices(query: string, choices: LibraryChoice[]): void {
    this.log.debug(
      {
        query: query.slice(0, 200),
        libraries: choices.map((c) => ({ libraryId: c.entry.library.id, requested: c.requested, from: c.from, reason: c.reason })),
      },
      'search: libraries selected',
    );
  }
}

/** Tie-breaker only: trust score, stars, then size of the documentation. */
function popularity(e: CatalogEntry): number {
  const snippets = defaultVersion(e)?.totalSnippets ?? 0;
  return (e.library.trustScore ?? 0) * 1e9 + Math.min(e.library.stars ?? 0, 1e6) * 100 + Math.min(snippets, 99);
}
