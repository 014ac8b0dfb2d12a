/**
 * reStructuredText -> markdown, enough for the markdown splitter: section titles (underlined,
 * optionally overlined; levels in order of first appearance, as docutils does), code-block /
 * code / sourcecode directives and `::` literal blocks as fences, admonitions as prose, other
 * directives, comments and link targets left out, and inline markup reduced to markdown.
 */
const ADORNMENT = /^([=\-~^"'`#*+:._])\1{2,}\s*$/;
const CODE = /^\.\.\s+(?:code-block|code|sourcecode)::\s*(?:(\S+)\s*)?$/;
const ADMONITION = /^\.\.\s+(note|warning|tip|important|caution|danger|attention|hint|error|seealso|versionadded|versionchanged|deprecated)::\s*(\S.*)?$/i;
const DIRECTIVE = /^\.\.\s+[\w:-]+::/;

export function rstToMarkdown(rst: string): string {
  const lines = rst.replace(/\r\n?/g, '\n').split('\n');
  const styles: string[] = [];
  const out: string[] = [];
  const levelOf = (style: string) => {
    if (!styles.includes(style)) styles.push(style);
    return Math.min(6, styles.indexOf(style) + 1);
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const next = lines[i + 1] ?? '';
    // Overlined title: adornment, text, adornment.
    if (ADORNMENT.test(line) && lines[i + 2] !== undefined && ADORNMENT.test(lines[i + 2]!) && next.trim() && lines[i + 2]![0] === line[0]) {
      out.push(`${'#'.repeat(levelOf(`o${line[0]}`))} ${inline(next.trim())}`, '');
      i += 2;
      continue;
    }
    if (line.trim() && !/^\s/.test(line) && ADORNMENT.test(next) && next.trim().length >= line.trim().length && !ADORNMENT.test(line)) {
      out.push(`${'#'.repeat(levelOf(`u${next[0]}`))} ${inline(line.trim())}`, '');
      i++;
      continue;
    }
    const code = CODE.exec(line);
    if (code) {
      const { block, end } = indentedBlock(lines, i + 1, true);
      out.push(`\`\`\`${code[1] ?? ''}`, ...block, '```', '');
      i = end - 1;
      continue;
    }
    const admonition = ADMONITION.exec(line);
    if (admonition) {
      const { block, end } = indentedBlock(lines, i + 1, false);
      const label = admonition[1]!.charAt(0).toUpperCase() + admonition[1]!.slice(1).toLowerCase();
      out.push(`**${label}:** ${inline([admonition[2] ?? '', ...block].join('\n').trim())}`, '');
      i = end - 1;
      continue;
    }
    if (DIRECTIVE.test(line) || /^\.\.(\s|$)/.test(line)) {
      // Other directives (toctree, image, automodule), comments and link targets carry no prose.
      i = indentedBlock(lines, i + 1, false).end - 1;
      continue;
    }
    if (/::\s*$/.test(line) && !/^\s/.test(line)) {
      const literal = indentedBlock(lines, i + 1, true);
      if (literal.block.length) {
        const text = line.replace(/\s*::\s*$/, /^\s*::\s*$/.test(line) ? '' : ':');
        if (text.trim()) out.push(inline(text), '');
        out.push('```', ...literal.block, '```', '');
        i = literal.end - 1;
        continue;
      }
    }
    out.push(inline(line));
  }
  return out.join('\n');
}

/** The indented block starting at `from` (after blank lines and, for code, `:option:` lines), dedented. */
function indentedBlock(lines: string[], from: number, skipOptions: boolean): { block: string[]; end: number } {
  let i = from;
  if (skipOptions) while (i < lines.length && /^\s+:[\w-]+:/.test(lines[i]!)) i++;
  const body: string[] = [];
  for (; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.trim() && !/^\s/.test(l)) break;
    body.push(l);
  }
  while (body.length && !body[0]!.trim()) body.shift();
  while (body.length && !body[body.length - 1]!.trim()) body.pop();
  const indent = Math.min(...body.filter((l) => l.trim()).map((l) => /^\s*/.exec(l)![0].length));
  return { block: body.map((l) => l.slice(Number.isFinite(indent) ? indent : 0)), end: i };
}

function inline(text: string): string {
  return text
    .replace(/`([^`<]+)<([^`>]+)>`__?/g, (_, label: string, target: string) => `[${label.trimEnd() || label[0]}](${target})`)
    .replace(/:[\w:-]+:`~?([^`]+)`/g, '`$1`')
    .replace(/``([^`]+)``/g, '`$1`')
    .replace(/`([^`]+)`_{1,2}/g, '$1')
    .replace(/\|([\w -]+)\|/g, '$1');
}
