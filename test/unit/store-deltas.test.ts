// Delta storage (issue 14, store/README.md), SQLite only: a schema-5 store (written by the previous version,
// test/fixtures/store-v5) converts with no loss. Delta rows on both stores: test/integration/store-contract.test.ts.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteDatabase, type SqliteDatabase as Store } from '../../src-main/store/index.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { plain } from '../helpers/stores.js';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures');

let dir: string;
const open: Store[] = [];
const mk = () => {
  const s = openSqliteDatabase({ dataDir: dir });
  open.push(s);
  return s;
};
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rollgate-deltas-'));
});
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('migration to delta storage (schema 5 → 7)', () => {
  it('opens a store written by schema 5, converts it, and every completion reads back byte-identical', async () => {
    cpSync(join(FIXTURES, 'store-v5', 'rollgate.sqlite'), join(dir, 'rollgate.sqlite'));
    const expected = (await import('../fixtures/store-v5/expected.json', { with: { type: 'json' } })).default as Array<Record<string, unknown>>;
    const s = mk();
    expect(s.db.pragma('user_version', { simple: true })).toBeGreaterThanOrEqual(7);
    const bySession = new Map<string, unknown[]>();
    for (const e of expected) bySession.set(e.sessionId as string, [...(bySession.get(e.sessionId as string) ?? []), e]);
    for (const [sid, want] of bySession) {
      expect(s.completions.listBySession(sid).map(plain)).toEqual(want);
      for (const w of want as Array<{ id: string }>) expect(plain(s.completions.get(w.id)!)).toEqual(w);
    }
    expect([...s.completions.iterateAll()].map(plain)).toEqual([...bySession.keys()].sort().flatMap((k) => bySession.get(k)!));
    const converted = s.db.prepare('SELECT COUNT(*) FROM completions WHERE parent_id IS NOT NULL').pluck().get() as number;
    expect(converted).toBeGreaterThan(expected.length / 2);
    // the stored prompt ids are now mostly suffixes
    const stored = s.db.prepare('SELECT SUM(length(prompt_ids)) FROM completions').pluck().get() as number;
    const full = s.db.prepare('SELECT SUM(4 * n_prompt) FROM completions').pluck().get() as number;
    expect(stored).toBeLessThan(full / 3);
  });
});
