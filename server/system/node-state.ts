import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';
import { SESSION_SECRET_SETTING, sessionSecret, sharedSessionSecret } from '../auth/sessions.ts';
import { LocalStagedFiles, SharedStagedFiles, type StagedFiles } from '../ingest/staged-files.ts';
import { LICENSE_SETTING, SharedLicense } from '../license/license-shared.ts';
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
  if (!shared) await settingsToFiles(config.dataDir, store.settings);
  return {
    staged: shared ? new SharedStagedFiles(config.dataDir, shared.staged) : new LocalStagedFiles(config.dataDir),
    licenseHolder: await licenseHolderOf(config, shared),
    cookieSecret: shared ? await sharedSessionSecret(shared.settings, config.dataDir) : sessionSecret(config.dataDir),
  };
}

/** Where this node's license is: STACKS_LICENSE_FILE, else the database (PostgreSQL), else <dataDir>/license.json. */
async function licenseHolderOf(config: Config, shared: PgStore | null): Promise<LicenseHolder> {
  // STACKS_LICENSE_FILE wins on either backend: the operator named a file for this node (a mounted
  // secret), and a license installed through another node must not silently override it.
  if (config.licenseFile) return new LicenseFile(config.licenseFile);
  const own = new LicenseFile(path.join(config.dataDir, 'license.json'));
  // A data dir's license.json (an instance moved from SQLite) is adopted for every node while the database has none.
  return shared ? SharedLicense.open(shared.settings, { adopt: own.text() }) : own;
}

/**
 * On SQLite the license and the cookie secret are data dir files; a database moved from PostgreSQL
 * (`stacks store copy --from`, a restore of an archive taken there) holds them as instance settings
 * instead. Each is written to its file when the file is missing, then dropped from the settings, so
 * that one place holds it (and a later move back to PostgreSQL adopts the file, not a stale row).
 */
async function settingsToFiles(dataDir: string, settings: Stores['settings']): Promise<void> {
  const files: [string, string][] = [
    [LICENSE_SETTING, 'license.json'],
    [SESSION_SECRET_SETTING, 'session.secret'],
  ];
  for (const [setting, name] of files) {
    const value = await settings.get(setting);
    if (value === null) continue;
    const file = path.join(dataDir, name);
    if (!fs.existsSync(file)) {
      fs.writeFileSync(`${file}.tmp`, value, { mode: 0o600 });
      fs.renameSync(`${file}.tmp`, file);
    }
    await settings.set(setting, null, new Date().toISOString());
  }
}
