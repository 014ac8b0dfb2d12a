import type { Express } from 'express';
import type { Operations } from '../../operations/index.ts';
import { route } from '../handler.ts';
import { callerOf } from '../auth.ts';

/** What these routes use. */
export interface JobRouteDeps {
  operations: Pick<Operations, 'jobsList' | 'jobGet' | 'jobCancel' | 'jobRetry'>;
}

/** How often the event stream looks for changed jobs, and how often it says it is alive. */
const EVENTS_POLL_MS = 500;
const EVENTS_KEEPALIVE_MS = 15_000;

/**
 * Job list, detail, cancel and retry (durable background work: imports, crawls, sources), and
 * `GET /api/jobs/events`: server-sent events, one `job` event (the job as GET /api/jobs/:id
 * answers it) whenever a job the caller may see appears or changes.
 */
export function mountJobs(app: Express, s: JobRouteDeps): void {
  app.get(
    '/api/jobs',
    route(async (req, res) => res.json(await s.operations.jobsList(req.query, callerOf(res)))),
  );
  app.get(
    '/api/jobs/events',
    route(async (req, res) => {
      const caller = callerOf(res);
      // The first list admits the caller and validates the filters before the stream starts.
      const first = await s.operations.jobsList(req.query, caller);
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      const seen = new Map<number, string>();
      const push = (jobs: typeof first.jobs) => {
        for (const job of [...jobs].reverse()) {
          const text = JSON.stringify(job);
          if (seen.get(job.id) === text) continue;
          seen.set(job.id, text);
          res.write(`event: job\nid: ${job.id}\ndata: ${text}\n\n`);
        }
      };
      push(first.jobs);
      const poll = setInterval(() => {
        s.operations.jobsList(req.query, caller).then(
          (r) => push(r.jobs),
          () => res.end(),
        );
      }, EVENTS_POLL_MS);
      const alive = setInterval(() => res.write(': alive\n\n'), EVENTS_KEEPALIVE_MS);
      res.on('close', () => {
        clearInterval(poll);
        clearInterval(alive);
      });
    }),
  );
  app.get(
    '/api/jobs/:id',
    route(async (req, res) => res.json(await s.operations.jobGet(req.params, callerOf(res)))),
  );
  app.post(
    '/api/jobs/:id/cancel',
    route(async (req, res) => res.json(await s.operations.jobCancel(req.params, callerOf(res)))),
  );
  app.post(
    '/api/jobs/:id/retry',
    route(async (req, res) => res.status(202).json(await s.operations.jobRetry(req.params, callerOf(res)))),
  );
}
