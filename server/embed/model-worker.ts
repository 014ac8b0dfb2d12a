import { parentPort, workerData } from 'node:worker_threads';
import fs from 'node:fs';
import ort from 'onnxruntime-node';
import { Tokenizer } from '@huggingface/tokenizers';
import { lowerThreadPriority } from '../../lib/thread-priority.ts';
import { waitForQuiet } from '../system/serving-activity.ts';

/** What the main thread gives a model worker (server/embed/model.ts). */
export interface ModelWorkerData {
  modelFile: string;
  tokenizerFile: string;
  maxTokens: number;
  /** ONNX Runtime's intra-op threads for this worker. */
  threads: number;
  /** The background lane (the embed job): its threads run at the lowest priority, after serving. */
  background: boolean;
  /** Requests in flight (server/system/serving-activity.ts): the background lane embeds each text in a quiet moment. */
  activity: SharedArrayBuffer | null;
}

export type ModelRequest = { id: number; texts: string[] };
export type ModelReply = { id: number; vectors: Float32Array[] } | { id: number; error: string };

const data = workerData as ModelWorkerData;
// Before the session starts its thread pool, which inherits this thread's priority.
if (data.background) lowerThreadPriority();
const tokenizer = new Tokenizer(JSON.parse(fs.readFileSync(data.tokenizerFile, 'utf8')), {});
const session = await ort.InferenceSession.create(data.modelFile, {
  intraOpNumThreads: data.threads,
  interOpNumThreads: 1,
  graphOptimizationLevel: 'all',
  executionMode: 'sequential',
  // Residual additions stay Add + LayerNormalization: ONNX Runtime's fused SkipLayerNormalization
  // CPU kernel took a fifth of each run (about 5 ns per value, against 0.7 for LayerNormalization),
  // so without the fusion a text embeds 15-20% faster, as close to the float model as before
  // (docs/embeddings.md). scripts/model/reference.py runs the model with the same setting.
  extra: { optimization: { disable_specified_optimizers: 'SkipLayerNormFusion' } },
});
const sep = tokenizer.token_to_id('[SEP]') ?? 102;

/** Word-piece ids with [CLS] and [SEP], cut to the model's length (the last kept id becomes [SEP]). */
function ids(text: string): number[] {
  const out = tokenizer.encode(text).ids;
  if (out.length <= data.maxTokens) return out;
  const cut = out.slice(0, data.maxTokens);
  cut[cut.length - 1] = sep;
  return cut;
}

/**
 * One text per run: int8 dynamic quantization scales each run's activations by their range, so a
 * text padded beside longer ones would get a (slightly) different vector; one at a time, a text
 * always gets the same one. On the CPU, batching saved nothing measurable.
 */
async function embedOne(text: string): Promise<Float32Array> {
  const row = ids(text);
  const input = BigInt64Array.from(row, (x) => BigInt(x));
  const out = await session.run({
    input_ids: new ort.Tensor('int64', input, [1, row.length]),
    attention_mask: new ort.Tensor('int64', new BigInt64Array(row.length).fill(1n), [1, row.length]),
  });
  return (out.sentence_embedding!.data as Float32Array).slice();
}

async function embed(texts: string[]): Promise<Float32Array[]> {
  const vectors: Float32Array[] = [];
  for (const text of texts) {
    // Each text waits (up to QUIET_WAIT_MS) until no request is in flight.
    if (data.background && data.activity) waitForQuiet(data.activity);
    vectors.push(await embedOne(text));
  }
  return vectors;
}

// Requests are answered one at a time, in order: the session is not shared between runs.
let queue: Promise<void> = Promise.resolve();
parentPort!.on('message', (req: ModelRequest) => {
  queue = queue.then(async () => {
    try {
      const vectors = await embed(req.texts);
      parentPort!.postMessage(
        { id: req.id, vectors } satisfies ModelReply,
        vectors.map((v) => v.buffer as ArrayBuffer),
      );
    } catch (err) {
      parentPort!.postMessage({ id: req.id, error: (err as Error).message } satisfies ModelReply);
    }
  });
});
parentPort!.postMessage({ ready: true });
