import path from 'node:path';
import type { Config } from '../config.ts';
import { sessionSecret, sharedSessionSecret } from '../auth/sessions.ts';
import { LocalStagedFiles, SharedStagedFiles, type StagedFiles } from '../ingest/staged-files.ts';
import { SharedLicense } from '../license/license-shared.ts';
import { LicenseFile, type LicenseHolder } from '../license/license.ts';
import { PgStore } from '../store/pg/index.ts';
import type { Stores } from '../store/stores.ts';

/**
 * What a node would otherwise keep on its own disk, kept where every node sees it when the nodes share
 * a PostgreSQL database (docs/operations.md, "What a node keeps on its disk"): jobs' staged inputs,
 * the installed license, the cookie secret. On SQLite, the data dir as ever.
 */
export async function nodeState(config: Config, store: Stores): Promise<{ staged: StagedFiles; licenseHolder: LicenseHolder; cookieSecret: string }> {
  const shared = store instanceof PgStore ? store : null;
  // STACKS_LICENSE_FILE wins on either backend: the operator named a file for this node (a mounted
  // secret), and a license installed through another node must not silently override it.
  const licenseHolder = config.licenseFile
    ? new LicenseFile(config.licenseFile)
    : shared
      ? await SharedLicense.open(shared.settings)
      : new LicenseFile(path.join(config.dataDir, 'license.json'));
  return {
    staged: shared ? new SharedStagedFiles(config.dataDir, shared.staged) : new LocalStagedFiles(config.dataDir),
    licenseHolder,
    cookieSecret: shared ? await sharedSessionSecret(shared.settings) : sessionSecret(config.dataDir),
  };
}
