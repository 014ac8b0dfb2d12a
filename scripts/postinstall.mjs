// Runs after `npm install`: converts the builtin embedder's word vectors once (see
// scripts/build-embeddings.mjs). Never fails the install: without the table the server converts
// it on first start, or the openai provider can be configured instead.
import { buildEmbeddings } from './build-embeddings.mjs';

try {
  const r = await buildEmbeddings({ log: (m) => console.log(`stacks postinstall: ${m}`) });
  if (!r.built) console.log(`stacks postinstall: embedding table ${r.file} ${r.reason}.`);
} catch (err) {
  console.warn(`stacks postinstall: the builtin embedding table was not built: ${err instanceof Error ? err.message : String(err)}`);
  console.warn('stacks postinstall: run "node scripts/build-embeddings.mjs" later, or the server converts it on first start.');
}
