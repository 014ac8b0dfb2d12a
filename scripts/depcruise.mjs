// Checks the import rules of .dependency-cruiser.mjs (the layers, no cycles) over the repository.
// dependency-cruiser's command line refuses Node 20, its API does not: this is `depcruise --validate`.
// Usage: node scripts/depcruise.mjs [--config FILE] [--root DIR] [paths...]
// --root checks another tree against the same rules (test/lint-layers.test.ts shows a cycle and an upward import failing).
import fs from 'node:fs';
import path from 'node:path';
import { cruise, format } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const repo = path.resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? args.splice(at, 2)[1] : fallback;
};
const configFile = path.resolve(option('--config', path.join(repo, '.dependency-cruiser.mjs')));
const root = path.resolve(option('--root', repo));
process.chdir(root);
const paths = args.length ? args : ['server', 'cli', 'crawler', 'lib', 'bin', 'scripts', 'test', 'bench'].filter((p) => fs.existsSync(p));

const options = await extractDepcruiseOptions(configFile);
// The repository's tsconfig, also when checking another tree.
if (options.tsConfig?.fileName) options.tsConfig.fileName = path.resolve(repo, options.tsConfig.fileName);
const tsConfig = options.tsConfig?.fileName ? extractTSConfig(options.tsConfig.fileName) : undefined;
const result = await cruise(paths, options, undefined, { tsConfig });
const report = await format(result.output, { outputType: 'err-long' });
process.stdout.write(report.output);
const s = result.output.summary;
process.stdout.write(`depcruise: ${s.totalCruised} modules, ${s.totalDependenciesCruised} dependencies, ${s.error} errors\n`);
process.exit(s.error > 0 ? 1 : 0);
