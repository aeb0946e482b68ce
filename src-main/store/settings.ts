// Small named values that must survive a restart (the policy version the trainer last set). Written
// synchronously: rare, and the API answers only once the value is durable.
import type Database from 'better-sqlite3';

/** The policy version stamped on new completions (POST /api/policy-version). */
export const POLICY_VERSION_SETTING = 'policyVersion';

export class SettingsRepo {
  private readonly getStmt;
  private readonly setStmt;

  constructor(db: Database.Database) {
    this.getStmt = db.prepare('SELECT value FROM settings WHERE key = ?');
    this.setStmt = db.prepare('INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at');
  }

  get<T>(key: string): T | undefined {
    const row = this.getStmt.get(key) as { value: string } | undefined;
    return row ? (JSON.parse(row.value) as T) : undefined;
  }

  set(key: string, value: unknown, now = Date.now()): void { this.setStmt.run(key, JSON.stringify(value), now); }
}
