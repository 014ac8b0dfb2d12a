/**
 * robots.txt through `robots-parser` (RFC 9309 matching, as Google's robotstxt): the group for our
 * product token (or `*`), Allow/Disallow with `*` and `$`, the longest matching rule wins (Allow on a
 * tie), percent-encoding normalised on both sides; `Sitemap:` lines.
 */
import robotsParserModule from 'robots-parser';

// The package's types declare an ES default export; the package is CommonJS with `module.exports = function`.
const robotsParser = robotsParserModule as unknown as typeof robotsParserModule.default;

export const CRAWLER_AGENT = 'StacksCrawler';

/** robots-parser only answers for URLs of the robots.txt's own origin; rules are read against paths, so any fixed origin does. */
const ORIGIN = 'http://robots.invalid';

type Parsed = ReturnType<typeof robotsParser>;

export class Robots {
  private constructor(
    private readonly parsed: Parsed | null,
    private readonly agent: string,
  ) {}

  static allowAll(): Robots {
    return new Robots(null, CRAWLER_AGENT);
  }

  static parse(text: string, agent = CRAWLER_AGENT): Robots {
    return new Robots(robotsParser(`${ORIGIN}/robots.txt`, text.replace(/^\uFEFF/, '')), agent);
  }

  /** The `Sitemap:` URLs, as written. */
  get sitemaps(): string[] {
    return this.parsed?.getSitemaps() ?? [];
  }

  /** Whether a path (with query) may be fetched. */
  allows(pathWithQuery: string): boolean {
    if (!this.parsed) return true;
    const path = pathWithQuery.startsWith('/') ? pathWithQuery : `/${pathWithQuery}`;
    return this.parsed.isAllowed(`${ORIGIN}${path}`, this.agent) ?? true;
  }
}
