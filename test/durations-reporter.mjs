// A test reporter for test/run.mjs when TEST_DURATIONS names a file: appends one JSON line per test
// file, [path under test/, Node.js major, seconds], the file's whole time with its loading (the
// runner's file-level event). test/run-versions.mjs packs the files into its two halves by these
// figures (test/durations.json); `node test/durations.mjs FILE` turns such lines into that table.
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname);
const major = Number(process.versions.node.split('.')[0]);

export default async function* durations(source) {
  for await (const ev of source) {
    if (ev.type !== 'test:complete' || ev.data.nesting !== 0 || !ev.data.file || !String(ev.data.name).endsWith('.test.ts')) continue;
    const file = path.relative(root, ev.data.file).split(path.sep).join('/');
    fs.appendFileSync(process.env.TEST_DURATIONS, `${JSON.stringify([file, major, Math.round(ev.data.details.duration_ms) / 1000])}\n`);
  }
}
