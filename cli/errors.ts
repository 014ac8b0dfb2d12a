import { CommanderError } from 'commander';
import { ConfigError } from '../server/config.ts';
import { ApiError } from '../lib/errors.ts';
import { RemoteError } from '../server/mcp/backend.ts';

/** Exit codes: 1 a failed job or an unexpected error, 2 invalid input or a refused request. */
export const EXIT_FAILED = 1;
export const EXIT_REFUSED = 2;

/** Commander "errors" that are not errors: help or version shown (their text is already out). */
const quietCommander = new Set(['commander.helpDisplayed', 'commander.help', 'commander.version', 'commander.executeSubCommandAsync']);

interface Described {
  code: string;
  message: string;
  exit: number;
  /** Whether the error's text was already shown (help output). */
  quiet: boolean;
}

function describe(err: unknown): Described {
  if (err instanceof CommanderError) {
    const quiet = quietCommander.has(err.code);
    return { code: 'validation_error', message: err.message.replace(/^error:\s*/, ''), exit: quiet ? err.exitCode : EXIT_REFUSED, quiet };
  }
  if (err instanceof ApiError) return { code: err.code, message: err.message, exit: EXIT_REFUSED, quiet: false };
  if (err instanceof RemoteError) return { code: err.code, message: err.message, exit: EXIT_REFUSED, quiet: false };
  if (err instanceof ConfigError) return { code: 'validation_error', message: err.message, exit: EXIT_REFUSED, quiet: false };
  const e = err as { message?: unknown; code?: unknown };
  const code = typeof e?.code === 'string' && /^[a-z_]+$/.test(e.code) ? e.code : 'internal_error';
  return { code, message: typeof e?.message === 'string' && e.message ? e.message : String(err), exit: EXIT_FAILED, quiet: false };
}

/**
 * Prints an error as one line on stderr (`stacks: message`, or `{"error","message"}` with --json)
 * and returns the exit code. STACKS_DEBUG=1 adds the stack trace.
 */
export function reportError(err: unknown, json: boolean, options: { stack?: boolean } = {}): number {
  const d = describe(err);
  if (d.quiet) return d.exit;
  const message = d.message.replace(/\s*\n\s*/g, ' ').trim();
  process.stderr.write(json ? `${JSON.stringify({ error: d.code, message })}\n` : `stacks: ${message}\n`);
  const debug = process.env.STACKS_DEBUG;
  const stack = options.stack || (debug !== undefined && debug !== '' && debug !== '0' && debug !== 'false');
  if (stack && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
  return d.exit;
}

/** Whether the command line asks for JSON output (before any `--`). */
export function wantsJson(argv: string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).includes('--json');
}

/**
 * A reader that goes away (`stacks libraries list | head`) closes stdout: end quietly with exit 0,
 * as a command killed by SIGPIPE would. Errors writing to stderr are ignored.
 */
export function handleClosedOutput(): void {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') process.exit(0);
    process.exit(reportError(err, false));
  });
  process.stderr.on('error', () => {});
}
