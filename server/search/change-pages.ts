/**
 * Release notes, changelogs, migration guides and release announcements describe how an API
 * changed, not how to use it. They repeat the API's names in every heading (`Adds z.transform()`,
 * `Async validation` in each "migrate from ..." guide), so for a question that does not ask about a
 * change they outrank the page that documents the API.
 */
import type { StoredSnippet } from '../../lib/model.ts';
import type { PreparedQuery } from './query.ts';
import { pageOf, sectionOf } from './source-url.ts';

/** A path segment naming a change page (`/blog/announcing-vite8`, `/guides/migrating-to-v5`, `/v4/changelog`, `(migration)/`). */
const CHANGE_PATH = /(^|[/\-_.(])(blog|changelog|changes|release-notes|releases|migration|migrating|migrate|upgrade|upgrading|whats-new|announcing)/i;
const CHANGE_TITLE = /\b(change ?log|release notes?|migrat(e|ion|ing)|upgrad(e|ing)|what'?s new|announcing|breaking changes)\b/i;
/** Words of a question about a change: an upgrade, a migration, a version, what was removed or renamed, moving from another library. */
const ASKS_CHANGE =
  /\b(upgrad\w*|migrat\w*|change ?log|breaking|deprecat\w*|removed?|renamed?|no longer|release notes?|what'?s new|new in|changed|changes|since|version\w*|v\d+|\d+\.\d+(\.\d+)?|(moving|coming|switching|porting|converting) (off|from|away))\b/i;

/** The first heading of a heading path (`Release notes > Metadata` -> `Release notes`). */
function headingRoot(path: string): string {
  const cut = path.indexOf(' > ');
  return (cut < 0 ? path : path.slice(0, cut)).trim();
}

/** The page a snippet is on, as HeadingRoots lists change pages (no `#anchor`, no `~N`). */
function pageKey(sourceId: string): string {
  return sectionOf(pageOf(sourceId));
}

/**
 * True when a snippet comes from a change page: by its address, its page title, or (`learned`, the
 * version's change pages told by their headings, HeadingRoots) its page.
 */
export function isChangePage(s: Pick<StoredSnippet, 'sourceId' | 'pageTitle' | 'breadcrumb'>, learned?: ReadonlySet<string> | null): boolean {
  const path = s.sourceId.replace(/^[a-z]+:\/\/[^/]+/i, '').replace(/#.*$/, '');
  return CHANGE_PATH.test(path) || CHANGE_TITLE.test(s.pageTitle || headingRoot(s.breadcrumb)) || (learned?.has(pageKey(s.sourceId)) ?? false);
}

/**
 * The pages of a version that are change pages by their sections' headings, not by their address:
 * a page whose most frequent heading root is a change title. A bundle gives no page title, and some
 * pages' sections stand alone under their own heading (`Upgraded z.discriminatedUnion()` of Zod's
 * "Release notes" page at `/v4/`), so a section alone does not tell; the page's headings together
 * do. Fed a version's rows as they are read (server/search/learn.ts reads them a page of rows at a
 * time and yields between them), so a large version does not hold the event loop.
 */
export class HeadingRoots {
  private readonly counts = new Map<string, Map<string, number>>();

  add(r: Pick<StoredSnippet, 'sourceId' | 'breadcrumb' | 'title'>): void {
    const page = pageKey(r.sourceId);
    const root = headingRoot(r.breadcrumb || r.title);
    let roots = this.counts.get(page);
    if (!roots) this.counts.set(page, (roots = new Map()));
    roots.set(root, (roots.get(root) ?? 0) + 1);
  }

  /** The change pages, sorted, so the same documents give the same list. */
  changePages(): string[] {
    const out: string[] = [];
    for (const [page, roots] of this.counts) {
      let best = '';
      let most = 0;
      for (const [root, n] of roots) if (n > most || (n === most && root < best)) [best, most] = [root, n];
      if (CHANGE_TITLE.test(best)) out.push(page);
    }
    return out.sort();
  }
}

/** True when a question asks about a change, or is pasted output (an error after an upgrade is answered by the migration guide). */
export function asksAboutChange(q: Pick<PreparedQuery, 'text' | 'pasted'>): boolean {
  return q.pasted || ASKS_CHANGE.test(q.text);
}
