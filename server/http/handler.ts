import type { Request, Response, NextFunction } from 'express';
import type { ApiError } from '../../lib/errors.ts';

/** Sends an ApiError as the one error shape of the API: its status, headers and {error, message} body. */
export function sendError(res: Response, err: ApiError): void {
  if (res.headersSent) return;
  for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
  res.status(err.status).json(err.toBody());
}

/** Wraps an async handler so that rejections reach the error handler. */
export function route(fn: (req: Request, res: Response) => Promise<unknown> | unknown) {
  return (req: Request, res: Response, next: NextFunction) => {
    Promise.resolve()
      .then(() => fn(req, res))
      .catch(next);
  };
}
