import { buildProgram } from './program.ts';
import { handleClosedOutput, reportError, wantsJson } from './errors.ts';

const json = wantsJson(process.argv.slice(2));
const fail = (err: unknown) => process.exit(reportError(err, json));
handleClosedOutput();
process.on('uncaughtException', fail);
process.on('unhandledRejection', fail);

try {
  await buildProgram().parseAsync(process.argv);
} catch (err) {
  fail(err);
}
