import pino, { type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs on stderr; anything that looks like a key is redacted. */
export function createLogger(level: string, destination: NodeJS.WritableStream = process.stderr): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: {
        paths: ['apiKey', 'key', 'token', 'authorization', 'headers.authorization', 'req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers["stacks_api_key"]', 'privateKey', 'secret', 'password', 'sshKey'],
        censor: '[redacted]',
      },
      formatters: { level: (label) => ({ level: label }) },
    },
    pino.destination({ dest: (destination as { fd?: number }).fd ?? 2, sync: false }),
  );
}

/** Removes `stk_...` keys from free text before it is logged or shown. */
export function scrubSecrets(text: string): string {
  return text.replace(/stk_[A-Za-z0-9_-]+/g, 'stk_[redacted]');
}
