import { probesByVersion, type SearchProbeStore, type VersionProbe } from '../search-probe.ts';
import { PROBE_WEIGHTS, termTsquery, toTsquery, type FtsPhrase } from './fts.ts';
import type { PgPool } from './pool.ts';
import type { SameShape } from './same-shape.ts';
import { named, pgQuery } from './transaction.ts';

/**
 * A row's score: for each phrase of the query, its rarity in the whole index (FTS5's bm25() idf,
 * log((N - n + 0.5) / (n + 0.5)), at least 1e-6) times ts_rank of the row for that phrase alone
 * (frequency in the row, saturating; normalization 1 divides by 1 + log of the row's length).
 * ts_rank has no idf, which bm25 weighs most: without it the same version came first for 33 of the
 * fixture corpus's 35 questions and the tie-break agreed on 31, with it 34 and 32 (the probe's words
 * are already the question's rarest, so the gain is small). N is the planner's row count of snippets (an
 * estimate is enough for a logarithm), or a count while the table has never been analyzed.
 *
 * $1: the whole query; $2: the row limit; with a version, $3: the version; then each phrase's tsquery
 * and, for a phrase of one word, the word: its count is then a lookup in snippet_vocab, else a count
 * on the GIN index, on its own parameter so that pg plans it with the value (exact either way).
 */
function scored(q: { query: string; phrases: FtsPhrase[] }, limit: number, version: number | null): { sql: string; args: unknown[] } {
  const args: unknown[] = [q.query, limit];
  if (version !== null) args.push(version);
  const arg = (v: unknown) => `$${args.push(v)}`;
  const queries: string[] = [];
  const counts: string[] = [];
  for (const p of q.phrases) {
    queries.push(`${arg(p.query)}::tsquery`);
    counts.push(
      p.term === null
        ? `(SELECT count(*) FROM snippets WHERE fts @@ ${queries.at(-1)!})`
        : `(SELECT coalesce(sum(docs), 0) FROM snippet_vocab WHERE term = ${arg(p.term)}::text)`,
    );
  }
  const sql = `WITH n AS MATERIALIZED (
    SELECT CASE WHEN c.reltuples > 0 THEN c.reltuples::float8 ELSE (SELECT count(*) FROM snippets WHERE fts IS NOT NULL)::float8 END AS n
    FROM pg_class c WHERE c.oid = 'snippets'::regclass),
  idf AS MATERIALIZED (
    SELECT p.q, greatest(ln((n.n - p.df + 0.5) / (p.df + 0.5)), 1e-6) AS w
    FROM unnest(ARRAY[${queries.join(', ')}], ARRAY[${counts.join(', ')}]::float8[]) AS p(q, df)
    CROSS JOIN n)
  SELECT s.version_id AS "versionId", (SELECT sum(idf.w * ts_rank('${PROBE_WEIGHTS}', s.fts, idf.q, 1)) FROM idf)::float8 AS score
  FROM snippets s WHERE s.fts @@ $1::tsquery${version !== null ? ' AND s.version_id = $3' : ''}
  ORDER BY score DESC, s.id LIMIT $2`;
  return { sql, args };
}

/**
 * The library probes on PostgreSQL, method for method SQLite's SearchProbeStore
 * (server/store/search-probe.ts), on the tsvector column snippets.fts (migration 002). `match` is the
 * callers' FTS5 expression, translated by fts.ts. The scores are not FTS5's bm25 (see scored): what
 * the probes need is that the same versions come first, which test/store-postgres-search.test.ts
 * measures on the fixture corpus.
 */
export class PgSearchProbeStore implements SameShape<SearchProbeStore> {
  constructor(private readonly pool: PgPool) {}

  async topVersions(match: string, limit: number, perVersion: number): Promise<VersionProbe[]> {
    const q = toTsquery(match);
    if (!q) return [];
    const { sql, args } = scored(q, limit, null);
    const { rows } = await pgQuery<{ versionId: number; score: number }>(this.pool, sql, args);
    return probesByVersion(rows, perVersion);
  }

  async versionScore(versionId: number, match: string, limit: number): Promise<VersionProbe> {
    const q = toTsquery(match);
    if (!q) return { versionId, hits: 0, score: 0 };
    const { sql, args } = scored(q, limit, versionId);
    const { rows } = await pgQuery<{ score: number }>(this.pool, sql, args);
    return { versionId, hits: rows.length, score: rows.reduce((t, r) => t + r.score, 0) };
  }

  /**
   * Summed from snippet_vocab (migration 002), the per-version counts the triggers on snippets keep:
   * exact, as fts5vocab's, and an index lookup per term. A term that is not one index token is
   * absent, as from fts5vocab.
   */
  async documentFrequencies(terms: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const asked = [...new Set(terms.filter((t) => termTsquery(t) !== null))];
    if (asked.length === 0) return out;
    const { rows } = await pgQuery<{ term: string; n: number }>(
      this.pool,
      named('SELECT term, sum(docs)::bigint AS n FROM snippet_vocab WHERE term = ANY($1::text[]) GROUP BY term HAVING sum(docs) > 0'),
      [asked],
    );
    const found = new Map(rows.map((r) => [r.term, r.n]));
    // In the order asked, as SQLite's map is filled.
    for (const t of terms) {
      const n = found.get(t);
      if (n !== undefined) out.set(t, n);
    }
    return out;
  }

  /**
   * As SQLite's: changes whenever a library, a served version or a version's model is added, removed
   * or changed (not the same text). The models' part also sums a hash of each one's version and time:
   * a search ranks with the model times its catalogue view read under the stamp (request-reads.ts),
   * and a model learned again on a node whose clock is behind another's would not raise max(built_at).
   */
  async catalogStamp(): Promise<string> {
    const { rows } = await pgQuery<{ stamp: string }>(
      this.pool,
      named(`SELECT (SELECT count(*) || ':' || coalesce(max(updated_at), '') || ':' || coalesce(sum(access_rev), 0) FROM libraries) || '|' ||
              (SELECT count(*) || ':' || coalesce(max(id), 0) || ':' || coalesce(max(updated_at), '') FROM library_versions WHERE is_current = 1) || '|' ||
              (SELECT count(*) || ':' || coalesce(max(built_at), '') || ':' || coalesce(sum(hashtext(version_id || '@' || built_at)), 0) FROM search_models) AS stamp`),
    );
    return rows[0].stamp;
  }
}
