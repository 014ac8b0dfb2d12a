/**
 * A snippet's source URL names its section and its page: `https://site/page#anchor~2` is the second
 * code block of the section `https://site/page#anchor` on the page `https://site/page`.
 */

/** The section a snippet belongs to: its source URL without the `~N` of repeated anchors. */
export function sectionOf(sourceId: string): string {
  return sourceId.replace(/~\d+$/, '');
}

/** A snippet's section in one version: the same address in two versions is two sections. */
export function sectionKey(s: { versionId: number; sourceId: string }): string {
  return `${s.versionId}\u0000${sectionOf(s.sourceId)}`;
}

/** The page a source URL is on: the URL without its `#anchor`. */
export function pageOf(url: string): string {
  const i = url.indexOf('#');
  return i < 0 ? url : url.slice(0, i);
}
