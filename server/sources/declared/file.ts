import cron from 'node-cron';
import { load, YAMLException } from 'js-yaml';
import type { z } from 'zod';
import { ApiError } from '../../../lib/errors.ts';
import { DECLARED_KINDS, type DeclaredKind } from './kinds.ts';
import { YamlPositions, type YamlPath } from './positions.ts';

/** One validated entry of sources.yaml: its kind, its options, and the library it becomes. */
export interface DeclaredEntry {
  kind: DeclaredKind;
  entry: Record<string, unknown>;
  libraryId: string;
  /** Its line in the file (for messages). */
  line: number;
}

/**
 * Reads sources.yaml: `sources:` a list of entries, each one kind key (website, llmstxt, openapi)
 * with its address and options. The file is accepted whole or refused whole: every problem is
 * reported with its line (`sources.yaml line 7: sources[1].maxPages: ...`), and nothing is applied.
 */
export function parseSourcesFile(text: string, name = 'sources.yaml'): DeclaredEntry[] {
  let doc: unknown;
  let positions: YamlPositions;
  try {
    doc = text.trim() === '' ? {} : load(text);
    positions = new YamlPositions(text);
  } catch (err) {
    if (err instanceof YAMLException) throw new ApiError('validation_error', `${name} line ${(err.mark?.line ?? 0) + 1}: ${err.reason || err.message}`);
    throw err;
  }
  const problems: string[] = [];
  const report = (path: YamlPath, message: string, key = false) => problems.push(`${name} line ${positions.line(path, { key })}: ${where(path)}${message}`);
  const entries: DeclaredEntry[] = [];
  const top = doc ?? {};
  if (typeof top !== 'object' || Array.isArray(top)) report([], 'expected a mapping with a "sources" list');
  else {
    for (const k of Object.keys(top)) if (k !== 'sources') report([k], `unknown key "${k}" (expected "sources")`, true);
    const list = (top as { sources?: unknown }).sources ?? [];
    if (!Array.isArray(list)) report(['sources'], 'expected a list of sources');
    else list.forEach((raw, i) => check(raw, ['sources', i], positions, report, entries));
  }
  const seen = new Map<string, number>();
  for (const e of entries) {
    const first = seen.get(e.libraryId);
    if (first !== undefined) problems.push(`${name} line ${e.line}: the same library as line ${first} (${e.libraryId})`);
    else seen.set(e.libraryId, e.line);
  }
  if (problems.length) throw new ApiError('validation_error', `${name} is not valid, nothing was applied:\n${problems.join('\n')}`);
  return entries;
}

function check(raw: unknown, path: YamlPath, positions: YamlPositions, report: (p: YamlPath, m: string, key?: boolean) => void, out: DeclaredEntry[]): void {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    return report(path, `expected a mapping with one of ${DECLARED_KINDS.map((k) => k.key).join(', ')}`);
  const named = DECLARED_KINDS.filter((k) => k.key in raw);
  if (named.length !== 1) {
    return report(
      path,
      named.length
        ? `names ${named.length} kinds (${named.map((k) => k.key).join(', ')}); one per entry`
        : `names no kind of source: add one of ${DECLARED_KINDS.map((k) => k.key).join(', ')}`,
    );
  }
  const kind = named[0]!;
  const parsed = kind.schema.safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) reportIssue(issue, path, report);
    return;
  }
  const schedule = parsed.data.schedule;
  if (typeof schedule === 'string' && !cron.validate(schedule))
    return report([...path, 'schedule'], `"${schedule}" is not a cron expression (e.g. "0 3 * * *")`);
  out.push({ kind, entry: parsed.data, libraryId: kind.libraryId(parsed.data), line: positions.line(path) });
}

function reportIssue(issue: z.core.$ZodIssue, base: YamlPath, report: (p: YamlPath, m: string, key?: boolean) => void): void {
  const path = [...base, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
  if (issue.code === 'unrecognized_keys') {
    for (const k of issue.keys) report([...path, k], `unknown option "${k}"`, true);
    return;
  }
  report(path, issue.message);
}

/** `sources[1].maxPages: ` for a path. */
function where(path: YamlPath): string {
  if (path.length === 0) return '';
  return `${path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i ? '.' : ''}${p}`)).join('')}: `;
}
