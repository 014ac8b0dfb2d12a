import { fromMarkdown } from 'mdast-util-from-markdown';
import { mdx } from 'micromark-extension-mdx';
import { mdxFromMarkdown } from 'mdast-util-mdx';

/**
 * MDX reduced to markdown: JSX components are replaced by their text (their children, plus a
 * title or label attribute: `<Tab label="npm">` keeps "npm"), expressions `{...}` and
 * import/export statements are left out. The document is parsed with the MDX parser of the
 * unified project (micromark-extension-mdx, JavaScript-agnostic) to find the components; a file
 * it cannot parse (MDX is strict about `<` and `{` in prose) is reduced by patterns instead.
 */
interface Node {
  type: string;
  children?: Node[];
  position?: { start: { offset?: number }; end: { offset?: number } };
  name?: string | null;
  attributes?: { type: string; name?: string; value?: unknown }[];
}

const LABELS = new Set(['title', 'label', 'alt', 'caption', 'summary', 'heading']);

export function mdxToMarkdown(source: string): string {
  const text = stripEsm(source);
  try {
    const tree = fromMarkdown(text, { extensions: [mdx()], mdastExtensions: [mdxFromMarkdown()] }) as unknown as Node;
    return rewrite(text, 0, text.length, tree);
  } catch {
    return byPatterns(text);
  }
}

/** `import`/`export` statements at the top level (outside fences), up to the next blank line. */
function stripEsm(text: string): string {
  const lines = text.split('\n');
  const out: string[] = [];
  let fence: string | null = null;
  let inEsm = false;
  for (const line of lines) {
    const f = /^\s*(`{3,}|~{3,})/.exec(line);
    if (f && (fence === null || line.trim().startsWith(fence))) fence = fence === null ? f[1]! : null;
    if (fence === null && !inEsm && /^(import|export)\s/.test(line)) inEsm = true;
    if (inEsm) {
      if (!line.trim()) inEsm = false;
      continue;
    }
    out.push(line);
  }
  return out.join('\n');
}

function isMdx(n: Node): boolean {
  return n.type.startsWith('mdxJsx') || n.type === 'mdxFlowExpression' || n.type === 'mdxTextExpression' || n.type === 'mdxjsEsm';
}

/** The outermost MDX nodes below `parent`, in document order. */
function outermost(parent: Node, into: Node[] = []): Node[] {
  for (const c of parent.children ?? []) {
    if (isMdx(c)) into.push(c);
    else outermost(c, into);
  }
  return into;
}

function rewrite(src: string, from: number, to: number, parent: Node): string {
  let out = '';
  let at = from;
  for (const n of outermost(parent)) {
    const s = n.position?.start.offset;
    const e = n.position?.end.offset;
    if (s === undefined || e === undefined || s < at) continue;
    out += src.slice(at, s) + replacement(src, n);
    at = e;
  }
  return out + src.slice(at, to);
}

function replacement(src: string, n: Node): string {
  if (!n.type.startsWith('mdxJsx')) return '';
  const labels = (n.attributes ?? [])
    .filter((a) => a.type === 'mdxJsxAttribute' && a.name && LABELS.has(a.name) && typeof a.value === 'string')
    .map((a) => a.value as string);
  const kids = n.children ?? [];
  const first = kids[0]?.position?.start.offset;
  const last = kids[kids.length - 1]?.position?.end.offset;
  const inner = first !== undefined && last !== undefined ? dedentTail(rewrite(src, first, last, n)) : '';
  const flow = n.type === 'mdxJsxFlowElement';
  const label = labels.join(' ');
  if (!flow) return [label, inner].filter(Boolean).join(' ');
  return `\n${[label && `**${label}**`, inner].filter(Boolean).join('\n\n')}\n`;
}

/** Children of a component start at their content; the lines after keep the component's indentation: remove it. */
function dedentTail(text: string): string {
  const lines = text.split('\n');
  const rest = lines.slice(1).filter((l) => l.trim());
  const indent = rest.length ? Math.min(...rest.map((l) => /^[ \t]*/.exec(l)![0].length)) : 0;
  return [lines[0]!, ...lines.slice(1).map((l) => l.slice(Math.min(indent, /^[ \t]*/.exec(l)![0].length)))].join('\n');
}

/** The fallback: component tags and one-line `{...}` expressions removed outside code fences. */
function byPatterns(text: string): string {
  let fence: string | null = null;
  return text
    .split('\n')
    .map((line) => {
      const f = /^\s*(`{3,}|~{3,})/.exec(line);
      if (f && (fence === null || line.trim().startsWith(fence))) {
        fence = fence === null ? f[1]! : null;
        return line;
      }
      if (fence !== null) return line;
      return line
        .replace(/<\/?[A-Z][\w.]*(\s[^<>]*?)?\/?>/g, (tag) => {
          const m = /\b(?:title|label)=["']([^"']+)["']/.exec(tag);
          return m ? m[1]! : '';
        })
        .replace(/\{[^{}`]*\}/g, '');
    })
    .join('\n');
}
