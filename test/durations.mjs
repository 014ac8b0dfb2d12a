// Turns the lines test/durations-reporter.mjs wrote (TEST_DURATIONS=FILE, one or more runs) into
// test/durations.json, the table test/run-versions.mjs splits the files by and test/run.mjs orders
// them by: per file, the median of its measured seconds over every run and version.
//   TEST_DURATIONS=/tmp/d.jsonl npm run test:suite && node test/durations.mjs /tmp/d.jsonl > test/durations.json
import fs from 'node:fs';

const per = new Map();
for (const file of process.argv.slice(2))
  for (const line of fs.readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    const [name, , s] = JSON.parse(line);
    per.set(name, [...(per.get(name) ?? []), s]);
  }
const median = (xs) => {
  const v = [...xs].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};
const seconds = Object.fromEntries([...per.keys()].sort().map((k) => [k, Math.round(median(per.get(k)) * 10) / 10]));
process.stdout.write(
  `${JSON.stringify({ about: 'Seconds per test file with its loading, on 2 cores with the suite running (node test/durations.mjs)', seconds }, null, 2)}\n`,
);
