import { z } from 'zod';
import { ApiError } from '../../lib/errors.ts';
import type { Embedder } from './types.ts';
import { normalize } from './normalize.ts';

/**
 * Embeddings from an OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, Azure-style proxies,
 * vLLM, Ollama, LocalAI, text-embeddings-inference...). The URL comes from the administrator's
 * configuration and usually points inside the company network, so private addresses are fine;
 * only http and https are accepted.
 */
export interface OpenAIEmbedderOptions {
  /** Base URL (http://host:8080), the /v1 root, or the full .../embeddings URL. */
  url: string;
  model: string;
  apiKey?: string;
  /** Expected dimension; sent as `dimensions` (models that can shorten their output honour it). Probed when absent. */
  dims?: number;
  /** Texts per request. */
  batchSize?: number;
  /** Characters per request across its texts; keeps requests under typical body and token limits. */
  maxBatchChars?: number;
  timeoutMs?: number;
  /** Extra attempts after a network error, a timeout, 429 or 5xx. */
  retries?: number;
  fetch?: typeof fetch;
}

/** Longest text sent (about 2,000 tokens: under the 8,192-token limit of common embedding models). */
const MAX_TEXT_CHARS = 8000;

const responseSchema = z.object({
  data: z.array(z.object({ embedding: z.array(z.number()), index: z.number().int().min(0).optional() })),
});

/** The request URL for a configured endpoint; throws on other schemes or a malformed URL. */
export function embeddingsUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`STACKS_EMBED_URL is not a valid URL: ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`STACKS_EMBED_URL must use http or https, not ${url.protocol.replace(':', '')}`);
  const p = url.pathname.replace(/\/+$/, '');
  if (!p.endsWith('/embeddings')) url.pathname = p.endsWith('/v1') ? `${p}/embeddings` : `${p}/v1/embeddings`;
  return url;
}

export class OpenAIEmbedder implements Embedder {
  readonly id: string;
  readonly sentenceEncoder = true;
  private readonly url: URL;
  private readonly batchSize: number;
  private readonly maxBatchChars: number;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly fetchFn: typeof fetch;

  private constructor(
    private readonly options: OpenAIEmbedderOptions,
    readonly dims: number,
  ) {
    this.url = embeddingsUrl(options.url);
    this.id = `openai:${options.model}`;
    this.batchSize = options.batchSize ?? 64;
    this.maxBatchChars = options.maxBatchChars ?? 200_000;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.retries = options.retries ?? 2;
    this.fetchFn = options.fetch ?? fetch;
  }

  /** Validates the URL and learns the dimension (configured, or from one probe request). */
  static async create(options: OpenAIEmbedderOptions): Promise<OpenAIEmbedder> {
    embeddingsUrl(options.url);
    if (options.dims) return new OpenAIEmbedder(options, options.dims);
    const probe = new OpenAIEmbedder(options, 0);
    const [v] = await probe.request(['dimension probe']);
    if (!v || v.length === 0) throw new Error(`${probe.url.href} returned an empty embedding for model ${options.model}`);
    return new OpenAIEmbedder(options, v.length);
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    let batch: string[] = [];
    let chars = 0;
    for (const raw of texts) {
      // Endpoints reject empty input; a placeholder keeps positions aligned.
      const text = raw.trim() === '' ? '(empty)' : raw.length > MAX_TEXT_CHARS ? raw.slice(0, MAX_TEXT_CHARS) : raw;
      if (batch.length > 0 && (batch.length >= this.batchSize || chars + text.length > this.maxBatchChars)) {
        out.push(...(await this.request(batch)));
        batch = [];
        chars = 0;
      }
      batch.push(text);
      chars += text.length;
    }
    if (batch.length > 0) out.push(...(await this.request(batch)));
    return out;
  }

  private async request(input: string[]): Promise<Float32Array[]> {
    const body: Record<string, unknown> = { model: this.options.model, input, encoding_format: 'float' };
    if (this.options.dims) body.dimensions = this.options.dims;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await this.fetchFn(this.url, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(this.timeoutMs) });
      } catch (err) {
        const timeout = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
        const why = timeout
          ? `no answer within ${this.timeoutMs} ms`
          : `${(err as Error).message}${(err as { cause?: Error }).cause ? ` (${(err as { cause: Error }).cause.message})` : ''}`;
        if (attempt < this.retries) {
          await sleep(500 * 2 ** attempt);
          continue;
        }
        throw new ApiError('embedding_failed', `Embedding endpoint ${this.url.href} failed: ${why}`, { cause: err });
      }
      if (!res.ok) {
        const text = (await res.text().catch(() => '')).slice(0, 300).replace(/\s+/g, ' ');
        if ((res.status === 429 || res.status >= 500) && attempt < this.retries) {
          const retryAfter = Number(res.headers.get('retry-after'));
          await sleep(Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(retryAfter * 1000, 10_000) : 500 * 2 ** attempt);
          continue;
        }
        const hint =
          res.status === 401 || res.status === 403
            ? ' (check STACKS_EMBED_API_KEY)'
            : res.status === 404
              ? ' (check STACKS_EMBED_URL and STACKS_EMBED_MODEL)'
              : '';
        throw new ApiError('embedding_failed', `Embedding endpoint ${this.url.href} answered ${res.status}${hint}: ${text}`);
      }
      return this.parse(await res.json().catch(() => null), input.length);
    }
  }

  private parse(json: unknown, expected: number): Float32Array[] {
    const parsed = responseSchema.safeParse(json);
    if (!parsed.success) throw new ApiError('embedding_failed', `Embedding endpoint ${this.url.href} returned an unexpected body (no data[].embedding arrays)`);
    const data = parsed.data.data;
    if (data.length !== expected)
      throw new ApiError('embedding_failed', `Embedding endpoint ${this.url.href} returned ${data.length} embeddings for ${expected} texts`);
    const out = new Array<Float32Array>(expected);
    data.forEach((d, i) => {
      const at = d.index ?? i;
      if (at >= expected || out[at])
        throw new ApiError('embedding_failed', `Embedding endpoint ${this.url.href} returned a duplicate or out-of-range index ${at}`);
      if (this.dims && d.embedding.length !== this.dims) {
        throw new ApiError(
          'embedding_failed',
          `Embedding endpoint ${this.url.href} returned ${d.embedding.length} dimensions, expected ${this.dims} (set STACKS_EMBED_DIMS to the model's dimension)`,
        );
      }
      out[at] = normalize(Float32Array.from(d.embedding));
    });
    return out;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
