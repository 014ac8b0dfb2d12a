import type { CodeExample } from '../../lib/model.ts';

/** The fields of a snippet the embedder reads (both a row being written and a stored snippet have them). */
export interface EmbeddableSnippet {
  kind: 'code' | 'info';
  title: string;
  breadcrumb: string;
  description: string;
  content: string;
  codeList: CodeExample[] | null;
}

/**
 * What the embedder sees of a snippet: titles and prose first, code last (it matters least for
 * meaning). Shared by the writer and the re-embed job so both produce the same vector.
 */
export function embeddingText(s: EmbeddableSnippet): string {
  if (s.kind === 'code')
    return `${s.title}\n${s.breadcrumb}\n${s.description}\n${(s.codeList ?? [])
      .map((c) => c.code)
      .join('\n')
      .slice(0, 2000)}`;
  return `${s.title}\n${s.breadcrumb}\n${s.content.slice(0, 4000)}`;
}
