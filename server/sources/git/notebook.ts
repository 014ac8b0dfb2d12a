/**
 * A Jupyter notebook (.ipynb) as markdown: markdown cells as they are, code cells as fenced blocks
 * in the notebook's language; outputs are left out (they are results, not documentation).
 */
interface Cell {
  cell_type?: string;
  source?: string | string[];
}

interface Notebook {
  cells?: Cell[];
  metadata?: { kernelspec?: { language?: string }; language_info?: { name?: string } };
}

export function notebookToMarkdown(json: string): string {
  let nb: Notebook;
  try {
    nb = JSON.parse(json) as Notebook;
  } catch {
    throw new Error('not a Jupyter notebook (invalid JSON)');
  }
  if (!Array.isArray(nb.cells)) throw new Error('not a Jupyter notebook (no cells)');
  const language = (nb.metadata?.kernelspec?.language ?? nb.metadata?.language_info?.name ?? 'python').toLowerCase();
  const parts: string[] = [];
  for (const cell of nb.cells) {
    const source = (Array.isArray(cell.source) ? cell.source.join('') : (cell.source ?? '')).replace(/\s+$/, '');
    if (!source.trim()) continue;
    if (cell.cell_type === 'markdown') parts.push(source);
    else if (cell.cell_type === 'code') {
      const fence = '`'.repeat(Math.max(3, ...[...source.matchAll(/`+/g)].map((m) => m[0].length + 1)));
      parts.push(`${fence}${language}\n${source}\n${fence}`);
    }
  }
  return parts.join('\n\n');
}
