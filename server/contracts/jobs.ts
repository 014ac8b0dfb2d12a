import { z } from 'zod';
import { ADMINS, defineOperation, idInput } from './operation.ts';
import { job } from './responses.ts';

/** Durable background jobs: imports, crawls, sources, model learning. */

export const JOB_STATES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;

export const jobsListInput = z.object({
  state: z.enum(JOB_STATES).optional(),
  kind: z.string().min(1).max(40).optional(),
  libraryId: z.string().min(1).max(500).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

export const jobsListOperation = defineOperation({
  id: 'jobsList',
  summary: 'Jobs, newest first',
  input: jobsListInput,
  access: { caller: 'key' },
  http: { method: 'get', path: '/api/jobs', from: 'query', status: 200, response: z.object({ jobs: z.array(job) }) },
  errors: ['invalid_api_key'],
});

export const jobGetOperation = defineOperation({
  id: 'jobGet',
  summary: 'One job: state, progress, error',
  input: idInput,
  access: { caller: 'key' },
  http: { method: 'get', path: '/api/jobs/{id}', from: 'path', status: 200, response: job },
  errors: ['invalid_api_key', 'job_not_found'],
});

export const jobCancelOperation = defineOperation({
  id: 'jobCancel',
  summary: 'Cancel a queued or running job',
  input: idInput,
  access: { caller: 'key', roles: ADMINS },
  http: { method: 'post', path: '/api/jobs/{id}/cancel', from: 'path', status: 200, response: job },
  errors: ['invalid_api_key', 'forbidden', 'job_not_found', 'conflict'],
});

export const jobRetryOperation = defineOperation({
  id: 'jobRetry',
  summary: 'Queue a failed or cancelled crawl or version fetch again (a new job with the same input)',
  input: idInput,
  access: { caller: 'key', roles: ADMINS },
  http: { method: 'post', path: '/api/jobs/{id}/retry', from: 'path', status: 202, response: job },
  errors: ['invalid_api_key', 'forbidden', 'job_not_found', 'conflict'],
});
