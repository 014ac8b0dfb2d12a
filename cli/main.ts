import { buildProgram } from './program.ts';
import { handleClosedOutput, reportError, wantsJson } from './errors.ts';

const argv = process.argv.slice(2);
const json = wantsJson(argv);
handleClosedOutput();
// An error escaping a running server is a bug: its stack goes to the log; a command's errors are one line.
const serving = argv[0] === 'serve';
process.on('uncaughtException', (err) => process.exit(reportError(err, json, { stack: serving })));
process.on('unhandledRejection', (err) => process.exit(reportError(err, json, { stack: serving })));

try {
  await buildProgram().parseAsync(process.argv);
} catch (err) {
  process.exit(reportError(err, json));
}
