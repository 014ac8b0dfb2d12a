import type { JobRegistrar } from '../services.ts';
import { registerReembedJob } from '../embed/reembed-job.ts';
import { registerImportJob } from '../ingest/import-job.ts';
import { registerVersionFetch } from '../search/version-fetch.ts';
import { registerCrawlJob } from '../../crawler/job.ts';
import { registerSearchModelJob, relearnAll } from '../search/model-job.ts';
import { registerSourceJobs } from '../sources/jobs.ts';

/** Job handlers by feature; add a registrar here when a feature brings a new job kind. */
export const jobRegistrars: JobRegistrar[] = [
  registerImportJob,
  // New vectors change the similarity features every model learned from: learn again.
  (s) => registerReembedJob(s, () => relearnAll(s.store, s.jobs, s.log)),
  registerVersionFetch,
  registerCrawlJob,
  registerSourceJobs,
  registerSearchModelJob,
];
