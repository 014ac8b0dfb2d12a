// A strict reader of the Prometheus text exposition format (version 0.0.4), for tests. The one
// parser on the npm registry (parse-prometheus-text-format 1.1.1) drops the labels, sums and counts
// of labelled histogram series, which is what /metrics is mostly made of; so this one checks the
// grammar line by line and fails on anything a scraper would refuse.
import assert from 'node:assert/strict';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  samples: Sample[];
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{((?:${LABEL}="(?:[^"\\\\\\n]|\\\\[\\\\"n])*",?)*)\\})? (\\S+)(?: -?\\d+)?$`);
const PAIR = new RegExp(`(${LABEL})="((?:[^"\\\\\\n]|\\\\[\\\\"n])*)"`, 'g');
const SUFFIXES: Record<Family['type'], string[]> = {
  counter: [''],
  gauge: [''],
  untyped: [''],
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['', '_sum', '_count'],
};

export function parsePrometheus(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  let current: Family | null = null;
  assert.ok(text.endsWith('\n'), 'the exposition ends with a newline');
  for (const [i, line] of text.slice(0, -1).split('\n').entries()) {
    const at = `line ${i + 1}: ${line}`;
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta;
      assert.match(name!, new RegExp(`^${NAME}$`), at);
      const f = families.get(name!) ?? { name: name!, help: '', type: 'untyped' as const, samples: [] };
      if (kind === 'HELP') f.help = rest!;
      else {
        assert.ok(['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest!), `${at}: unknown type`);
        assert.equal(f.samples.length, 0, `${at}: TYPE after samples`);
        f.type = rest as Family['type'];
      }
      families.set(name!, f);
      current = f;
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    assert.ok(m, `${at}: not a sample line`);
    const [, name, labelText, raw] = m;
    // As Prometheus reads it (Go's ParseFloat): Inf and NaN in any case (prom-client writes `Nan`).
    const special = raw!.toLowerCase();
    const value = /^\+?inf$/.test(special) ? Infinity : special === '-inf' ? -Infinity : special === 'nan' ? NaN : Number(raw);
    assert.ok(!Number.isNaN(value) || special === 'nan', `${at}: bad value`);
    assert.ok(current && SUFFIXES[current.type].some((s) => `${current!.name}${s}` === name), `${at}: sample outside its family`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (labelText ?? '').matchAll(PAIR)) labels[k!] = v!.replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1');
    current.samples.push({ name: name!, labels, value });
  }
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

/** Per series: cumulative buckets ending with +Inf, whose count equals _count. */
function checkHistogram(f: Family): void {
  const series = new Map<string, Sample[]>();
  for (const s of f.samples) {
    const { le: _le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    series.set(key, [...(series.get(key) ?? []), s]);
  }
  for (const [key, samples] of series) {
    const buckets = samples.filter((s) => s.name.endsWith('_bucket'));
    const count = samples.find((s) => s.name.endsWith('_count'));
    assert.ok(buckets.length && count, `${f.name} ${key}: buckets and _count`);
    assert.equal(buckets.at(-1)!.labels.le, '+Inf', `${f.name} ${key}: the last bucket is +Inf`);
    for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i]!.value >= buckets[i - 1]!.value, `${f.name} ${key}: buckets are cumulative`);
    assert.equal(buckets.at(-1)!.value, count.value, `${f.name} ${key}: +Inf bucket equals _count`);
  }
}

/** The samples of a family whose labels include `labels`. */
export function samplesOf(families: Map<string, Family>, name: string, labels: Record<string, string> = {}, suffix = ''): Sample[] {
  const f = families.get(name);
  assert.ok(f, `metric family ${name} is exposed`);
  return f.samples.filter((s) => s.name === `${name}${suffix}` && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}
