/**
 * Chooses the bias of the "nothing found" decision (server/search/nothing-found.ts) on the dev
 * split of test/eval: `node --import tsx scripts/fit-nothing-found.ts`. Every dev question but the
 * version and multi-library ones is asked of /api/v3/search without a library; off-topic ones
 * should be refused, on-topic ones answered. With the shipped slopes, the bias is the one of least
 * cost averaged over +-0.1 around it (the raw cost of a few dozen questions jumps at each one):
 * an off-topic question answered costs 1, a library-less on-topic one refused 1, another on-topic
 * one refused 0.2 (written with a library in mind, so rarely asked without one).
 * Blind questions are never asked.
 */
import { startEvalServer } from '../test/eval/http.ts';
import { loadQuestions } from '../test/eval/question-set.ts';
import { verdictReader } from '../test/eval/verdicts.ts';
import { TUNING } from '../server/search/tuning.ts';

const NOTHING_FOUND = TUNING.nothingFound;

interface Row {
  off: boolean;
  weight: number;
  unknown: number;
  coverage: number;
}

async function collect(): Promise<Row[]> {
  const server = await startEvalServer();
  const verdicts = verdictReader(server.services);
  const rows: Row[] = [];
  try {
    for (const q of loadQuestions().filter((x) => x.split === 'dev' && x.kind !== 'version' && x.kind !== 'multi')) {
      // A question naming a library is never refused: no verdict.
      const v = await verdicts.verdictOf(q.query);
      if (v && Number.isFinite(v.z)) {
        rows.push({
          off: q.kind === 'offtopic',
          weight: q.kind === 'offtopic' || q.kind === 'libraryless' || q.kind === 'language' ? 1 : 0.2,
          unknown: v.unknown,
          coverage: v.coverage,
        });
      }
    }
  } finally {
    await server.close();
  }
  return rows;
}

const refused = (r: Row, bias: number) => bias + NOTHING_FOUND.unknown * r.unknown + NOTHING_FOUND.coverage * r.coverage > 0;
const costOf = (rows: Row[], bias: number) => rows.reduce((c, r) => c + (r.off !== refused(r, bias) ? r.weight : 0), 0);

const rows = await collect();
if (process.argv.includes('--curve')) for (let b = 0.5; b <= 1.3; b += 0.05) console.log(`bias ${b.toFixed(2)}: cost ${costOf(rows, b).toFixed(1)}`);
const grid = Array.from({ length: 301 }, (_, i) => Math.round((-1 + i * 0.01) * 100) / 100);
const smoothed = (b: number) => {
  let sum = 0;
  for (let k = -10; k <= 10; k++) sum += costOf(rows, b + k * 0.01);
  return sum / 21;
};
const bias = grid.reduce((best, b) => (smoothed(b) < smoothed(best) - 1e-9 ? b : best), grid[0]!);
const off = rows.filter((r) => r.off);
const on = rows.filter((r) => !r.off);
console.log(`dev: ${off.length} off-topic, ${on.length} on-topic questions asked without a library`);
console.log(
  `shipped bias ${NOTHING_FOUND.bias}: cost ${costOf(rows, NOTHING_FOUND.bias).toFixed(1)}, off-topic refused ${off.filter((r) => refused(r, NOTHING_FOUND.bias)).length}, on-topic refused ${on.filter((r) => refused(r, NOTHING_FOUND.bias)).length}`,
);
console.log(
  `chosen bias ${bias.toFixed(2)}: cost ${costOf(rows, bias).toFixed(1)} (smoothed ${smoothed(bias).toFixed(2)}), off-topic refused ${off.filter((r) => refused(r, bias)).length}, on-topic refused ${on.filter((r) => refused(r, bias)).length}`,
);
