/**
 * Every ranking and retrieval setting of server/search/, in one place, by stage in the order a
 * question meets them, each with its reason (docs/retrieval.md describes the stages; the figures
 * behind them are in history/retrieval-experiments.md). Modules read them from here and nowhere
 * else defines them. Not here: the learned ranking weights (ranker-defaults.ts, written by
 * scripts/learn-default-ranker.ts), limits of the API contract (select.ts MAX_LIBRARIES), cache
 * sizes and batch sizes that bound memory or event-loop time (kept beside their caches), format
 * versions (ranker.ts MODEL_FORMAT) and the parsing rules of question understanding (regular
 * expressions and word lengths in query.ts, error-text.ts, code-text.ts, overview.ts).
 */
export const TUNING = {
  /** Question analysis (query.ts). */
  query: {
    /**
     * Terms the per-version lexical scan looks up. BM25 weighs each by its rarity in the version, so
     * the cap only bounds the cost of a long question: at 16, a stack trace's first lines used them all
     * and the error message below was never searched (dev error questions, MRR@10 0.676 -> 0.778 at
     * 64); at 64, a question that tells its story first was cut before it asked (questions of 150-200
     * words, MRR@10 0.576 -> 0.714 at 128). A 2,000-character question has about 150 terms.
     */
    scanTerms: 128,
    /** Terms of the FTS5 expression (whole-index queries, whose cost grows faster with terms). */
    matchTerms: 16,
    /**
     * A question is in another language when at least `foreignStopwords` distinct words, and
     * `foreignShare` of its words, are that language's stopwords (stopwords.ts): over the 1,800
     * English questions of test/eval none is taken for another language.
     */
    foreignStopwords: 2,
    foreignShare: 0.2,
  },

  /**
   * Typos spelling correction allows in a word (spelling.ts): none under `oneTypoFrom` letters (short
   * words have too many neighbours: "rout" is "route" and "rout"), one up to 7 letters, two from `twoTyposFrom`.
   */
  spelling: { oneTypoFrom: 5, twoTyposFrom: 8 },

  /** The lexical list (bm25.ts, and the term index built by server/ingest/term-chunks.ts). */
  bm25: {
    /** FTS5's bm25() constants (k1, b). */
    k1: 1.2,
    b: 0.75,
    /**
     * Column weights of the term frequency, applied when the index is built (server/ingest/term-chunks.ts).
     * A title hit counts most, then the heading path, the description of a code example, the prose,
     * and code last (identifiers repeat a lot inside code). Chosen on test/eval (docs/retrieval.md).
     */
    weights: { title: 8, breadcrumb: 4, description: 3, code: 1.2, content: 1.5 },
  },

  /**
   * Fusion of the lexical and vector lists (retrieve.ts). Reciprocal rank fusion: score = sum over
   * lists of weight / (rrfK + rank), rank starting at 1. k = 60 is the value of the RRF paper and of
   * the peer tools; it flattens the head so that agreement between the lists matters more than one list's top.
   */
  fusion: {
    rrfK: 60,
    lexicalWeight: 1.0,
    // The builtin word-vector embedder is weaker than BM25 on its own (test/eval): its list counts a bit less.
    vectorWeight: 0.7,
    /**
     * A candidate found only by the vector list needs at least this cosine similarity: KNN always
     * returns k neighbours, also for a question the library knows nothing about. Measured with the
     * builtin embedder: unrelated questions score 0.05-0.25, related ones 0.45 and up.
     */
    minVectorOnlySimilarity: 0.3,
    /** Candidates taken from each list before fusion. */
    lexicalLimit: 40,
    vectorLimit: 40,
  },

  /** Candidates loaded from the fused list of one version (pipeline.ts; learn.ts asks its headings the same way). */
  fetch: {
    /** Candidates loaded in fast mode: enough for dedupe and a full 20-snippet answer. */
    fast: 40,
    /**
     * Candidates the ranking model scores (of the ~70 the two lists give), the best fused first: the
     * tail never reached an answer on test/eval (same figures with all of them) and costs rows,
     * features and dedupe (6% more throughput at 1M snippets without it).
     */
    rerank: 50,
  },

  /**
   * The dynamic source-code index (dynamic.ts, docs/git.md): searched when the documentation is thin
   * for a question; its candidates rank below documentation of equal relevance.
   */
  dynamic: {
    /**
     * Score factor of a source-code candidate against documentation: applied to the fused order
     * (dynamic.ts) and to the ranker's probabilities (ranker.ts).
     */
    penalty: 0.8,
    /** Documentation is thin when fewer candidates than this came back... */
    minCandidates: 3,
    /** ...or when the best of its first `head` candidates holds less than this share of the question's terms. */
    minCoverage: 0.75,
    head: 3,
    /** Source-code candidates loaded per question. */
    limit: 10,
    /** Candidates taken from each list of the source partition before fusion. */
    lexicalLimit: 20,
    vectorLimit: 20,
  },

  /**
   * The ranker's hand-set parts (ranker.ts). The feature values below are part of the features'
   * definition: a change changes what every model learned (bump MODEL_FORMAT, relearn the default).
   */
  ranker: {
    /** Probability factor of a change page's snippet for a question that does not ask about a change (change-pages.ts). */
    changePagePrior: 0.5,
    /** `kind` feature: code for a how-to question, prose for a what/why question: +cue, the other way -cue. */
    kindCue: 0.5,
    /** `language` feature: code in a language the question names +cue, in another language -cue. */
    languageCue: 0.5,
    /** `substance` feature: tokens and description words (counted up to `words`) each count half, saturating here. */
    substanceTokens: 60,
    substanceWords: 15,
  },

  /** Duplicates (dedupe.ts). */
  dedupe: {
    /**
     * Near-duplicate threshold: Jaccard similarity of word 3-gram shingles. 0.8 catches the same
     * section copied between a website and a repository (or two versions of a page) while keeping
     * sections that merely share boilerplate lines.
     */
    nearDuplicateJaccard: 0.8,
    /** Dedupe keeps at most this many snippets (an answer holds at most 20; the rest is slack for the budget). */
    keep: 60,
    /** Shingles are taken from the start of a body only (near-copies agree from their first lines; it bounds the cost per candidate). */
    shingleChars: 800,
  },

  /** Sections in the head of an answer (diversify.ts). */
  diversify: {
    /**
     * Each further snippet of a section already listed has its score multiplied by this once more,
     * so a section keeps its best snippet but yields to other sections unless it is four times as
     * likely to answer. 0.85 until Nov 28: an answer's first five then held 3.5 sections on average,
     * now 3.9 (docs/retrieval.md, Nov 28).
     */
    sectionDecay: 0.25,
  },

  /** Context pulled in around the best hits (neighbours.ts). */
  neighbours: {
    /** How many of the top hits get context. */
    hits: 3,
    /** A code description shorter than this is "thin". */
    thinDescriptionChars: 80,
    /** A prose snippet under this many tokens is "short". */
    shortInfoTokens: 60,
    /**
     * A linked section is pulled up from this place of the ranked list on (0-based): one among the
     * first five is in view already, and grouping it under the hit that links to it would only make
     * the block longer.
     */
    linkedFrom: 5,
  },

  /** The answer's shape and size (budget.ts). */
  budget: {
    /** Default response budget (tokens of snippet bodies) and the most snippets one answer carries. */
    tokens: 5000,
    maxSnippets: 20,
    /**
     * Weak tails are dropped, not padded: past the first `keep` sections, a snippet whose probability
     * of answering is under `ratio` times the best one's ends the answer. On test/eval (dev split) this
     * left hit@5 and MRR of the text order unchanged and raised the JSON order's (code snippets listed
     * before prose) hit@5 from 74% to 81%: the tail was mostly code that pushed the best prose out of reach.
     * When the best snippet more likely than not answers (probability >= `confident`), code under that
     * floor is left out anywhere in the answer: such a client shows it first (JSON order, dev split:
     * hit@1 57.8% -> 59.9%, MRR@10 0.680 -> 0.695; the text order unchanged).
     * When the best snippet is prose whose section has no code in the answer, code under
     * `proseFirst` times its probability is left out too: a client listing code first would show
     * another section's example before the explanation that answers (JSON order, dev split: hit@1
     * 60.3% -> 63.8%, MRR@10 0.686 -> 0.708; text order hit@5 80.6% -> 80.0%, MRR@10 0.703 -> 0.702).
     */
    weakTail: { ratio: 0.1, keep: 5, confident: 0.5, proseFirst: 0.5 },
  },

  /**
   * The "nothing found" decision of a library-less search (nothing-found.ts):
   * z = bias + unknown x U + coverage x C over the best `candidates` snippets, refused when z > 0.
   * The slopes were fitted by logistic regression on the dev split of test/eval (off-topic
   * questions against on-topic ones asked without a library); the bias is the least costly on dev
   * (scripts/fit-nothing-found.ts: an off-topic question answered costs as much as a library-less
   * on-topic one refused). See docs/retrieval.md for the figures.
   */
  nothingFound: { bias: 1.14, unknown: 7.71, coverage: -5.71, candidates: 3 },

  /** How rare a word is in English (word-rarity.ts; read by "nothing found" and spelling). */
  wordRarity: {
    /**
     * A word the word table ranks beyond this many more frequent ones (or does not hold) may be a
     * typo: past it the table holds mostly misspellings, names and joined words ("enviroment",
     * "redcat"); the everyday and technical words of questions rank before it ("resizing" 136,000).
     */
    typoRank: 150_000,
  },

  /** The names a library goes by and how a typed name scores against them (names.ts, package-names.ts). */
  names: {
    /** How strongly each name stands for the library (title and repository 1, owner and site host less). */
    weights: {
      title: 1,
      /** The product name in a site title ("The Complete StrictPath Guide"): a crawled site's ID says nothing. */
      titleCore: 1,
      repo: 1,
      docsRepo: 0.95,
      sourceRepo: 0.95,
      owner: 0.85,
      docsHost: 0.85,
      sourceHost: 0.8,
      /** A package the documentation installs that holds a word of the library's name (`react-query`); a mention in prose. */
      package: 0.9,
    },
    /**
     * Names weighing less than this (owner and host names) do not count as mentions in prose
     * ("facebook", "vercel"), only as the scope of an npm package (the publishing organisation).
     */
    mentionWeight: 0.9,
    /**
     * A typed name against a library's names, times the name's weight: exact 1, exact without a js
     * suffix `noJs`, a word of a multi-word name `word`, one typo or two swapped letters `typo`, two
     * typos `twoTypos`, a prefix covering `prefixShare` of the name `prefix`, words found in title and
     * description `description`. 0 = no match.
     */
    match: { noJs: 0.97, word: 0.8, typo: 0.7, twoTypos: 0.55, prefix: 0.5, prefixShare: 0.6, description: 0.35 },
  },

  /** Choosing the libraries of a search (select.ts) and the whole-index probe of a library-less one. */
  selection: {
    /** Name score a library value must reach to select a library (0.5 = a prefix or a close typo). */
    nameThreshold: 0.5,
    /** Libraries whose name scores are within this of the best are ordered by how well their documents match the question... */
    tieBand: 0.1,
    /** ...the first this many of them, each by its best `tieRows` rows... */
    tieLibraries: 12,
    tieRows: 5,
    /** ...unless their name scores differ by more than this. */
    tieClose: 0.05,
    /** Library-less questions: libraries whose documents score at least this share of the best one join it. */
    probeShare: 0.6,
    /** Rows of the whole index looked at to infer libraries from a question's documents. */
    probeRows: 200,
    /** A version's probe score sums this many of its best rows (its best evidence, not how many loosely matching snippets it has). */
    probePerVersion: 3,
    /** The question's words whose document counts are looked up for the probe. */
    probeWords: 48,
    /** The probe uses at most this many of the question's words, the rarest first. */
    probeTerms: 8,
    /** The probe's words may match at most this many snippets together (its cost grows with them); the rarest word always counts. */
    probeDocBudget: 12_000,
  },

  /** GET /api/v2/libs/search (library-search.ts). */
  librarySearch: {
    /** Names scoring below this are not offered at all (0.35 = every word found in title and description, names.match.description). */
    minScore: 0.35,
    /** The most libraries one answer lists. */
    limit: 20,
  },

  /**
   * A search across several libraries (search-service.ts): each library's BM25 and vector lists are
   * cut to listLimit, only its best perLibrary fused candidates are loaded and go to the global
   * reranker, and dedupe looks at the first dedupeHead x maxSnippets of the reranked list. The token
   * budget of one answer grows a little with each extra library (one bounded response).
   */
  multi: { listLimit: 30, perLibrary: 20, dedupeHead: 2, tokensPerExtraLibrary: 1500, snippetsPerExtraLibrary: 5 },

  /** Learning a version's ranking model from its headings (learn.ts). */
  learn: {
    /** At most this many headings per version (sampled by a hash of the section, so the same ones each time). */
    maxQuestions: 400,
    /** Fewer usable headings than this: keep the default weights (only the calibration is fitted). */
    minQuestions: 40,
    /** One page in this many is held out to validate the learned weights. */
    holdOutEvery: 5,
    /** Positives per question in the pairs (a section has several snippets). */
    positivesPerQuestion: 3,
    epochs: 200,
    learningRate: 0.5,
    /** Pull towards the default weights. */
    l2: 0.01,
  },

  /** researchMode (research.ts). */
  research: {
    maxSubQueries: 4,
    /** The question's first this many terms are a sub-query of their own. */
    keyTerms: 6,
    /** Each sub-query's best this many snippets are fused by reciprocal rank with this k. */
    perQuery: 20,
    rrfK: 60,
    /** Snippets kept as sources after fusing the sub-queries. */
    sources: 8,
    /** Sentences in an extractive answer. */
    sentences: 8,
    /** A sentence of a source is a candidate within these lengths (characters). */
    minSentenceChars: 25,
    maxSentenceChars: 600,
    /** A sentence sharing more than this share of its stems with a chosen one is a near-repeat. */
    repeatOverlap: 0.7,
    /** Better ranked sources count more: a sentence's coverage plus this / (source rank + 1). */
    rankBonus: 0.3,
    /** Tokens of source text sent to a chat model. */
    chatContextTokens: 6000,
  },
} as const;
