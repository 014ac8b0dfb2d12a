import type { Migration } from './migration.ts';
import { redactValue } from '../../../lib/redact.ts';

/**
 * Audit entries written before secrets were redacted on write (issue 41) may hold what a refused
 * request sent: a key pasted as a name, a license signature. They are redacted on display, but
 * the database file and its backups would still carry them: they are rewritten once, here, the
 * append-only trigger lifted for that rewrite alone (same transaction).
 */
export const m020: Migration = {
  version: 20,
  name: 'audit-redact',
  up(db) {
    const rows = db.prepare('SELECT id, actor_name, target, detail FROM audit_log').all() as {
      id: number;
      actor_name: string | null;
      target: string | null;
      detail: string | null;
    }[];
    const update = db.prepare('UPDATE audit_log SET actor_name = ?, target = ?, detail = ? WHERE id = ?');
    const text = (v: string | null) => (v === null ? null : (redactValue(v) as string));
    const detail = (v: string | null) => {
      if (v === null) return null;
      try {
        return JSON.stringify(redactValue(JSON.parse(v)));
      } catch {
        return text(v);
      }
    };
    db.exec('DROP TRIGGER audit_log_append_only');
    for (const r of rows) {
      const next = [text(r.actor_name), text(r.target), detail(r.detail)];
      if (next[0] !== r.actor_name || next[1] !== r.target || next[2] !== r.detail) update.run(...next, r.id);
    }
    db.exec(`
      CREATE TRIGGER audit_log_append_only
        BEFORE UPDATE OF at, actor_kind, actor_key_id, actor_name, teamspace_id, action, target, source_ip, outcome, detail ON audit_log
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
    `);
  },
};
