import type { Db } from './db.ts';

/** Instance settings kept in the database (set in the console), by name. */
export class SettingsStore {
  constructor(private readonly db: Db) {}

  async get(name: string): Promise<string | null> {
    return (this.db.prepare('SELECT value FROM instance_settings WHERE name = ?').get(name) as { value: string } | undefined)?.value ?? null;
  }

  /** Sets (or, with null, removes) a setting. */
  async set(name: string, value: string | null, now: string): Promise<void> {
    if (value === null) this.db.prepare('DELETE FROM instance_settings WHERE name = ?').run(name);
    else
      this.db
        .prepare(
          'INSERT INTO instance_settings (name, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
        )
        .run(name, value, now);
  }

  /** The setting's value; when it has none, `value` is stored first. Two callers at once get the same one. */
  async claim(name: string, value: string, now: string): Promise<string> {
    this.db.prepare('INSERT INTO instance_settings (name, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING').run(name, value, now);
    return (this.db.prepare('SELECT value FROM instance_settings WHERE name = ?').get(name) as { value: string }).value;
  }
}
