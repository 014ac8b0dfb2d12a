// Checks the import rules of .dependency-cruiser.mjs (the layers, no cycles) over the repository.
// dependency-cruiser's command line refuses Node 20, its API does not: this is `depcruise --validate`.
// Usage: node scripts/depcruise.mjs [--config FILE] [paths...]
import fs from 'node:fs';
import path from 'node:path';
import { cruise, format } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const root = path.resolve(import.meta.dirname, '..');
process.chdir(root);
const args = process.argv.slice(2);
const configAt = args.indexOf('--config');
const configFile = configAt >= 0 ? args.splice(configAt, 2)[1] : './.dependency-cruiser.mjs';
const paths = args.length ? args : ['server', 'cli', 'crawler', 'lib', 'bin', 'scripts', 'test', 'bench'].filter((p) => fs.existsSync(p));

const options = await extractDepcruiseOptions(configFile);
const tsConfig = options.tsConfig?.fileName ? extractTSConfig(options.tsConfig.fileName) : undefined;
const result = await cruise(paths, options, undefined, { tsConfig });
const report = await format(result.output, { outputType: 'err-long' });
process.stdout.write(report.output);
const s = result.output.summary;
process.stdout.write(`depcruise: ${s.totalCruised} modules, ${s.totalDependenciesCruised} dependencies, ${s.error} errors\n`);
process.exit(s.error > 0 ? 1 : 0);
