// `npm run bench -- console [--rounds 50] [--dir DIR]`
// Server time of what each console page loads, on the cached 1M-snippet corpus (bench/corpus.ts):
// a real server in a child process, an owner's key, each request `rounds` times one after the
// other over loopback (so the time is the server's plus a loopback round trip). Target: < 200 ms.
import { parseArgs } from 'node:util';
import { startStacksProcess, stopProcess } from '../test/helpers/server.ts';
import { httpGet, percentile as pct } from './stats.ts';
import { ensureBenchCorpus } from './corpus.ts';
import { Store } from '../server/store/index.ts';
import { KeyService } from '../server/auth/keys.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '50' }, dir: { type: 'string' } }, allowPositionals: true });
const rounds = Number(values.rounds);
const corpus = await ensureBenchCorpus({ dir: values.dir });
console.log(`corpus: ${corpus.snippets.toLocaleString('en')} snippets, ${corpus.libraries.length} libraries (${corpus.dataDir}); ${rounds} rounds per request`);

// An owner's key for the admin pages (a member "bench-console" of the default teamspace).
const store = Store.open(corpus.dataDir);
const key = (await new KeyService(store).create({ name: `bench console ${Date.now()}`, memberName: 'bench-console', role: 'owner' })).key;
store.close();

const { url, child } = await startStacksProcess({ dataDir: corpus.dataDir, env: { STACKS_RATE_LIMIT_PER_MINUTE: '0' } });
const lib = corpus.libraries[0]!;
const libPath = `/api/libraries${lib}`;
const pages: Record<string, string[]> = {
  'search page (static)': ['/', '/js/main.js', '/style.css'],
  'library list': ['/api/session', '/api/libraries'],
  'library page': [libPath, `${libPath}/snippets?limit=20`],
  jobs: ['/api/jobs?limit=100'],
  keys: ['/api/v2/keys'],
  admin: ['/api/v2/members', '/api/v2/usage?days=30', '/api/v2/rules', '/api/v2/policies', '/api/license', '/api/system', '/api/audit?limit=50'],
};
try {
  const headers = { authorization: `Bearer ${key}` };
  for (const paths of Object.values(pages)) for (const p of paths) await httpGet(`${url}${p}`, headers); // warm-up
  for (const [page, paths] of Object.entries(pages)) {
    const lat: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const t0 = performance.now();
      for (const p of paths) {
        const r = await httpGet(`${url}${p}`, headers);
        if (r.status !== 200) throw new Error(`${p}: HTTP ${r.status} ${r.body.slice(0, 200)}`);
      }
      lat.push(performance.now() - t0);
    }
    const s = lat.sort((a, b) => a - b);
    console.log(
      `${page.padEnd(22)} ${String(paths.length).padStart(2)} requests  p50 ${pct(s, 50).toFixed(1).padStart(6)} ms  p95 ${pct(s, 95).toFixed(1).padStart(6)} ms  max ${s.at(-1)!.toFixed(1).padStart(6)} ms (all requests of the page, one after the other)`,
    );
  }
} finally {
  await stopProcess(child);
}
