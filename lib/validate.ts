import type { z } from 'zod';
import { ApiError } from './errors.ts';

/** Parses input with a zod schema; the first problem becomes a 400 validation_error naming the parameter. */
export function validate<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const where = issue.path.length ? issue.path.join('.') : 'request';
  const message = issue.code === 'invalid_type' && issue.input === undefined ? `${where} is required.` : `${where}: ${issue.message}`;
  throw new ApiError('validation_error', message);
}
