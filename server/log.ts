import pino, { type DestinationStream, type Logger } from 'pino';
import { redactValue, scrubSecrets } from '../lib/redact.ts';

export type { Logger };
export { scrubSecrets };

/**
 * Structured JSON logs on stderr (or `destination`). No secret is written at any level: every
 * argument of every log call (the message, its interpolated values, the merged object at any depth,
 * errors with their messages and stacks) and every child logger's bindings go through redactValue
 * (lib/redact.ts), which redacts by field name and by the shape of the text (a key pasted into a
 * URL path has no telling field name).
 */
export function createLogger(level: string, destination: NodeJS.WritableStream = process.stderr): Logger {
  const logger = pino(
    {
      level,
      base: undefined,
      formatters: { level: (label) => ({ level: label }) },
      // Errors arrive here already redacted to plain objects (logMethod); pino's own serializer would retype them as `Object`.
      serializers: { err: (err: unknown) => redactValue(err) },
      hooks: {
        logMethod(args, method) {
          method.apply(this, redactArgs(args) as Parameters<typeof method>);
        },
      },
    },
    sink(destination),
  );
  // pino applies formatters.bindings to the root logger only; a child's bindings are redacted here.
  // Children are created from their parent's prototype, so this covers grandchildren too.
  const child = logger.child;
  logger.child = function (this: Logger, bindings, options) {
    return child.call(this, redactValue(bindings) as typeof bindings, options);
  } as Logger['child'];
  return logger;
}

/**
 * A log call's arguments, redacted. A leading Error becomes `{err}` with its message as the
 * message when none is given, as pino does itself, so that its message is redacted too.
 */
function redactArgs(args: readonly unknown[]): unknown[] {
  const [first, ...rest] = args;
  if (first instanceof Error) {
    const err = redactValue(first) as { message?: unknown };
    return rest.length ? [{ err }, ...rest.map((a) => redactValue(a))] : [{ err }, err.message];
  }
  return args.map((a) => redactValue(a));
}

/** A file descriptor (stderr, stdout) is written asynchronously by pino's own stream; any other writable as it is (tests read it). */
function sink(destination: NodeJS.WritableStream): DestinationStream {
  const fd = (destination as { fd?: unknown }).fd;
  if (typeof fd === 'number') return pino.destination({ dest: fd, sync: false });
  return destination as unknown as DestinationStream;
}
