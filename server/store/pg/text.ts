/**
 * Text as PostgreSQL can store it: its `text` cannot hold U+0000, which SQLite's can, and a NUL in a
 * document (a bundle's snippet, a page's title) must not fail the whole write. Each NUL becomes U+FFFD,
 * the replacement character; everything else is unchanged.
 */
export function noNul<T extends string | null>(text: T): T {
  return (text?.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text) as T;
}
