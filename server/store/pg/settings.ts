import type { SettingsStore } from '../settings.ts';
import type { PgPool } from './pool.ts';
import type { SameShape } from './same-shape.ts';
import { pgQuery } from './transaction.ts';

/** Instance settings on PostgreSQL, method for method SQLite's SettingsStore (server/store/settings.ts). */
export class PgSettingsStore implements SameShape<SettingsStore> {
  constructor(private readonly pool: PgPool) {}

  async get(name: string): Promise<string | null> {
    return (await pgQuery<{ value: string }>(this.pool, 'SELECT value FROM instance_settings WHERE name = $1', [name])).rows[0]?.value ?? null;
  }

  /** Sets (or, with null, removes) a setting; one UPSERT, so two nodes setting it at once both succeed and the last wins. */
  async set(name: string, value: string | null, now: string): Promise<void> {
    if (value === null) await pgQuery(this.pool, 'DELETE FROM instance_settings WHERE name = $1', [name]);
    else
      await pgQuery(
        this.pool,
        'INSERT INTO instance_settings (name, value, updated_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
        [name, value, now],
      );
  }

  /**
   * The setting's value; when it has none, `value` is stored first. Two nodes at once get the same
   * one: the second INSERT waits for the first's row and does nothing, and the SELECT after it (a
   * statement of its own, so a snapshot taken after that row committed) reads the first's value.
   */
  async claim(name: string, value: string, now: string): Promise<string> {
    await pgQuery(this.pool, 'INSERT INTO instance_settings (name, value, updated_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING', [name, value, now]);
    return (await pgQuery<{ value: string }>(this.pool, 'SELECT value FROM instance_settings WHERE name = $1', [name])).rows[0]!.value;
  }
}
