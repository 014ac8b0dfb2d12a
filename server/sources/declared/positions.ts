import { EVENT_ALIAS, EVENT_DOCUMENT, EVENT_MAPPING, EVENT_POP, EVENT_SCALAR, EVENT_SEQUENCE, getScalarValue, parseEvents, type Event } from 'js-yaml';

export type YamlPath = readonly (string | number)[];

type Frame = { kind: 'seq'; path: YamlPath; index: number } | { kind: 'map'; path: YamlPath; key: string | null };

/**
 * Where each node of a YAML text starts, by its path (`sources.2.maxPages`), from js-yaml's event
 * stream (offsets into the text): a validation error on a loaded value can then name its line.
 * A mapping key is recorded under `<path>.<key>#key` too (an unknown key is reported at itself).
 */
export class YamlPositions {
  private readonly starts = new Map<string, number>();
  private readonly lineStarts: number[] = [0];

  constructor(source: string) {
    for (let i = 0; i < source.length; i++) if (source.charCodeAt(i) === 10) this.lineStarts.push(i + 1);
    this.walk(source, parseEvents(source, {}));
  }

  /** The 1-based line of the deepest node on `path` that the text has (a missing field: its parent's line). */
  line(path: YamlPath, options: { key?: boolean } = {}): number {
    for (let n = path.length; n >= 0; n--) {
      const k = keyOf(path.slice(0, n));
      const at = (options.key && n === path.length ? this.starts.get(`${k}#key`) : undefined) ?? this.starts.get(k);
      if (at !== undefined) return this.lineOf(at);
    }
    return 1;
  }

  private lineOf(offset: number): number {
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  }

  private walk(source: string, events: Event[]): void {
    const stack: Frame[] = [];
    const top = () => stack[stack.length - 1];
    const here = (): YamlPath => {
      const f = top();
      if (!f) return [];
      return f.kind === 'seq' ? [...f.path, f.index] : [...f.path, f.key ?? '?'];
    };
    const advance = () => {
      const f = top();
      if (f?.kind === 'seq') f.index++;
      else if (f) f.key = null;
    };
    for (const e of events) {
      if (e.type === EVENT_SEQUENCE || e.type === EVENT_MAPPING) {
        const path = here();
        this.starts.set(keyOf(path), e.start);
        stack.push(e.type === EVENT_SEQUENCE ? { kind: 'seq', path, index: 0 } : { kind: 'map', path, key: null });
      } else if (e.type === EVENT_SCALAR) {
        const f = top();
        if (f?.kind === 'map' && f.key === null) {
          f.key = getScalarValue(source, e);
          this.starts.set(`${keyOf([...f.path, f.key])}#key`, e.valueStart);
        } else {
          this.starts.set(keyOf(here()), e.valueStart);
          advance();
        }
      } else if (e.type === EVENT_ALIAS) advance();
      else if (e.type === EVENT_POP) {
        if (stack.pop()) advance();
      } else if (e.type === EVENT_DOCUMENT) stack.length = 0;
    }
  }
}

function keyOf(path: YamlPath): string {
  return path.join('.');
}
