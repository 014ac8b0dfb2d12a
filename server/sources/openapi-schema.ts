/** Schema and string helpers for the OpenAPI snippets: example values, property lists, quoting. */

export type Obj = Record<string, unknown>;

export function collectProps(schema: Obj, depth = 0): { props: [string, unknown][]; required: Set<string> } {
  const props = new Map<string, unknown>(Object.entries((schema.properties ?? {}) as Obj));
  const required = new Set<string>(arr(schema.required) as string[]);
  if (depth < 5) {
    for (const part of arr(schema.allOf) as Obj[]) {
      const inner = collectProps(part ?? {}, depth + 1);
      for (const [k, v] of inner.props) if (!props.has(k)) props.set(k, v);
      for (const r of inner.required) required.add(r);
    }
  }
  return { props: [...props.entries()], required };
}

/** A plausible example value from a schema (example/default/enum first), bounded in depth and breadth, cycle-safe. */
/** An example that stays readable: retried with less depth until its JSON fits in maxChars. */
export function compactExample(schema: Obj, maxChars = 1800): unknown {
  for (const maxDepth of [3, 2, 1, 0]) {
    const ex = exampleFor(schema, 0, new Set(), maxDepth);
    if (JSON.stringify(ex, null, 2).length <= maxChars || maxDepth === 0) return ex;
  }
  return null;
}

export function exampleFor(schema: Obj, depth: number, seen: Set<object>, maxDepth = 3): unknown {
  if (!schema || typeof schema !== 'object') return null;
  if (schema.example !== undefined) return schema.example;
  if (arr(schema.examples).length) return arr(schema.examples)[0];
  if (schema.default !== undefined) return schema.default;
  if (arr(schema.enum).length) return arr(schema.enum)[0];
  if (schema.const !== undefined) return schema.const;
  if (seen.has(schema) || depth > maxDepth) return str(schema.type) === 'array' ? [] : str(schema.type) === 'object' || schema.properties ? {} : null;
  seen.add(schema);
  try {
    const alt = (schema.oneOf ?? schema.anyOf) as Obj[] | undefined;
    if (alt?.length) return exampleFor(alt[0]!, depth + 1, seen, maxDepth);
    const type = Array.isArray(schema.type) ? str((schema.type as string[]).find((t) => t !== 'null')) : str(schema.type);
    if (type === 'array' || schema.items) return [exampleFor((schema.items ?? {}) as Obj, depth + 1, seen, maxDepth)];
    const { props, required } = collectProps(schema);
    if (type === 'object' || props.length) {
      // Required properties first; optional ones only while the object stays small (fewer at depth).
      const writable = props.filter(([, v]) => !((v ?? {}) as Obj).readOnly);
      const req = writable.filter(([k]) => required.has(k));
      const opt = writable.filter(([k]) => !required.has(k)).slice(0, Math.max(0, (depth === 0 ? 8 : 3) - req.length));
      const out: Obj = {};
      for (const [k, v] of [...req, ...opt]) out[k] = exampleFor((v ?? {}) as Obj, depth + 1, seen, maxDepth);
      return out;
    }
    if (!type) return null;
    return placeholder(schema);
  } finally {
    seen.delete(schema);
  }
}

export function placeholder(schema: Obj): unknown {
  const type = Array.isArray(schema.type) ? str((schema.type as string[])[0]) : str(schema.type);
  const fmt = str(schema.format);
  if (type === 'integer') return 0;
  if (type === 'number') return 0;
  if (type === 'boolean') return true;
  if (type === 'array') return [];
  if (type === 'object') return {};
  if (fmt === 'date-time') return '2024-01-01T00:00:00Z';
  if (fmt === 'date') return '2024-01-01';
  if (fmt === 'uuid') return '00000000-0000-0000-0000-000000000000';
  if (fmt === 'email') return 'user@example.com';
  if (fmt === 'uri' || fmt === 'url') return 'https://example.com';
  return 'string';
}

export function paramExample(p: Obj): unknown {
  if (p.example !== undefined) return p.example;
  if (p.examples && typeof p.examples === 'object') {
    const first = Object.values(p.examples as Obj)[0] as Obj | undefined;
    if (first && first.value !== undefined) return first.value;
  }
  const s = (p.schema ?? p) as Obj;
  if (s.example !== undefined) return s.example;
  if (s.default !== undefined) return s.default;
  if (arr(s.enum).length) return arr(s.enum)[0];
  return undefined;
}

export function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

export function str(v: unknown): string {
  return typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v);
}

export function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 3)}...` : s;
}

export function oneLine(s: string, n: number): string {
  return truncate(s.replace(/\s+/g, ' ').trim(), n);
}

export function shq(s: string): string {
  return s.replace(/'/g, `'\\''`);
}

export function jsq(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
}

export function indentTail(s: string, indent: string): string {
  return s
    .split('\n')
    .map((l, i) => (i === 0 ? l : indent + l))
    .join('\n');
}
