/** A small robots.txt reader: the group for our user agent (or `*`), Allow/Disallow with `*` and `$`, longest match wins. */

export const CRAWLER_AGENT = 'StacksCrawler';

interface Rule {
  allow: boolean;
  pattern: RegExp;
  length: number;
}

export class Robots {
  constructor(
    private readonly rules: Rule[],
    readonly sitemaps: string[],
  ) {}

  static allowAll(): Robots {
    return new Robots([], []);
  }

  static parse(text: string, agent = CRAWLER_AGENT): Robots {
    const groups: { agents: string[]; rules: Rule[] }[] = [];
    const sitemaps: string[] = [];
    let current: { agents: string[]; rules: Rule[] } | null = null;
    let lastWasAgent = false;
    for (const rawLine of text.split(/\r?\n/)) {
      const line = rawLine.replace(/#.*$/, '').trim();
      const m = /^([A-Za-z-]+)\s*:\s*(.*)$/.exec(line);
      if (!m) continue;
      const field = m[1]!.toLowerCase();
      const value = m[2]!.trim();
      if (field === 'sitemap') {
        if (value) sitemaps.push(value);
        continue;
      }
      if (field === 'user-agent') {
        if (!current || !lastWasAgent) {
          current = { agents: [], rules: [] };
          groups.push(current);
        }
        current.agents.push(value.toLowerCase());
        lastWasAgent = true;
        continue;
      }
      lastWasAgent = false;
      if (!current) continue;
      if (field === 'allow' || field === 'disallow') {
        if (field === 'disallow' && value === '') continue; // "Disallow:" allows everything
        current.rules.push({ allow: field === 'allow', pattern: toPattern(value), length: value.length });
      }
    }
    const me = agent.toLowerCase();
    const mine = groups.filter((g) => g.agents.some((a) => a !== '*' && me.includes(a)));
    const chosen = mine.length ? mine : groups.filter((g) => g.agents.includes('*'));
    return new Robots(chosen.flatMap((g) => g.rules), sitemaps);
  }

  /** Whether a path (with query) may be fetched. */
  allows(pathWithQuery: string): boolean {
    let best: Rule | null = null;
    for (const r of this.rules) {
      if (!r.pattern.test(pathWithQuery)) continue;
      if (!best || r.length > best.length || (r.length === best.length && r.allow)) best = r;
    }
    return best ? best.allow : true;
  }
}

function toPattern(value: string): RegExp {
  const anchored = value.endsWith('$');
  const body = (anchored ? value.slice(0, -1) : value).replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*');
  return new RegExp(`^${body}${anchored ? '$' : ''}`);
}
