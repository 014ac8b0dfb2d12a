import fs from 'node:fs';
import path from 'node:path';

/** `stacks.pid` in the data dir names the server process serving it (so a restore can refuse to swap files under a running server). */
export const PID_FILE = 'stacks.pid';

/** Writes this process's id; the returned function removes the file again (if it is still ours). */
export function claimPidFile(dataDir: string): () => void {
  const file = path.join(dataDir, PID_FILE);
  fs.writeFileSync(file, `${process.pid}\n`);
  return () => {
    try {
      if (fs.readFileSync(file, 'utf8').trim() === String(process.pid)) fs.rmSync(file, { force: true });
    } catch {
      // already gone
    }
  };
}

/** The id of a live process that claimed the data dir, or null (no file, or its process is gone). */
export function runningServer(dataDir: string): number | null {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(path.join(dataDir, PID_FILE), 'utf8').trim());
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? pid : null;
  }
}
