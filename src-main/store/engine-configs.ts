// Engines configured through the control API. Written synchronously: rare, small, and the API answers
// only once the change is durable (better-sqlite3 is synchronous, so this never splits a group commit).
import type Database from 'better-sqlite3';

export interface StoredEngine<C> { id: string; config: C; updatedAt: number }

export class EnginesRepo<C extends { id: string }> {
  private readonly listStmt;
  private readonly upsertStmt;
  private readonly deleteStmt;

  constructor(db: Database.Database) {
    this.listStmt = db.prepare('SELECT id, config, updated_at FROM engines ORDER BY updated_at, id');
    this.upsertStmt = db.prepare('INSERT INTO engines (id, config, updated_at) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET config = excluded.config, updated_at = excluded.updated_at');
    this.deleteStmt = db.prepare('DELETE FROM engines WHERE id = ?');
  }

  list(): StoredEngine<C>[] {
    return (this.listStmt.all() as Array<{ id: string; config: string; updated_at: number }>).map((r) => ({ id: r.id, config: JSON.parse(r.config) as C, updatedAt: r.updated_at }));
  }

  upsert(config: C, now = Date.now()): void { this.upsertStmt.run(config.id, JSON.stringify(config), now); }

  delete(id: string): boolean { return this.deleteStmt.run(id).changes > 0; }
}
