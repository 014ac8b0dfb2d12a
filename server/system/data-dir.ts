import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../config.ts';

/**
 * Fails fast, naming the path and who the process runs as, when the data dir cannot be created or
 * written (a volume mounted read-only or owned by another user, a file in its place): otherwise
 * SQLite would fail later with "unable to open database file".
 */
export function ensureWritableDataDir(dir: string): void {
  const who = typeof process.getuid === 'function' ? `uid ${process.getuid()}, gid ${process.getgid?.()}` : 'this user';
  const probe = path.join(dir, `.write-test-${process.pid}`);
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(probe, '');
    fs.rmSync(probe, { force: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new ConfigError(
      `The data directory ${dir} is not writable by this process (${who}; ${code}). ` +
        'Give that user write access (chown or chmod, or a named volume such as `-v stacks-data:/data`), or set DATA_DIR / --data-dir to a writable directory.',
    );
  }
}
