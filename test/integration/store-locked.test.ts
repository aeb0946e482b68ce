// Another connection holds the database's write lock (issue 18, item 9): a backup tool, a curious `sqlite3`
// shell, a second process. Agents used to freeze for the busy timeout (5 s per try, the whole process with them)
// and then get a 500 "database is locked". Now the writer waits off the event loop's thread, agents get their
// own dialect's 503 with Retry-After, nothing is acknowledged that was not recorded, and once the lock goes
// the same sessions carry on.
import { sqliteDatabaseOf } from '../../src-main/store/index.js';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { dialectCall, expectErrorBody, type AgentDialect } from './fault-helpers.js';

let app: TestApp;
beforeAll(async () => { app = await startTestApp(); });
afterAll(async () => { await app.stop(); });

async function call(d: AgentDialect, key: string, stream: boolean) {
  const c = dialectCall(d, app.url, key, { stream, text: 'What is 2 + 3?', maxTokens: 32 });
  const res = await fetch(c.url, c.init);
  const text = await res.text();
  return { status: res.status, retryAfter: res.headers.get('retry-after'), text, body: stream ? null : JSON.parse(text) };
}

describe('the database is locked by another connection', () => {
  it('agents get a dialect-shaped 503 with Retry-After, the server keeps answering, and sessions carry on after', async () => {
    const s = await app.createSession({ engine: 'sim-vllm' });
    expect((await call('openai-chat', s.key, false)).status).toBe(200);
    const before = (await app.api(`/api/sessions/${s.id}`)).completionCount;

    const locker = new Database(sqliteDatabaseOf(app.store).path);
    locker.exec('BEGIN IMMEDIATE');
    try {
      const dialects: AgentDialect[] = ['openai-chat', 'anthropic', 'gemini', 'responses'];
      const [streamed, ...answers] = await Promise.all([call('anthropic', s.key, true), ...dialects.map((d) => call(d, s.key, false))]);
      dialects.forEach((d, i) => {
        expectErrorBody(d, 503, answers[i]);
        expect(answers[i].retryAfter).toMatch(/^\d+$/);
        expect(answers[i].text).toMatch(/store is busy/);
      });
      // A streaming call is refused before its stream opens (its intent could not be recorded): the same 503.
      expectErrorBody('anthropic', 503, { status: streamed.status, body: JSON.parse(streamed.text) });
      expect(streamed.retryAfter).toMatch(/^\d+$/);
      expect(streamed.text).toMatch(/store is busy/);
      // The control API answers meanwhile: the writer waited on a timer, not on the event loop.
      expect((await fetch(`${app.url}/api/health`)).status).toBe(200);
      expect(app.store.writer.stats.lockedRetries).toBeGreaterThan(0);
    } finally {
      locker.exec('COMMIT');
      locker.close();
    }

    // Nothing that was refused was recorded; the same session goes on.
    expect((await call('openai-chat', s.key, false)).status).toBe(200);
    expect((await app.api(`/api/sessions/${s.id}`)).completionCount).toBe(before + 1);
  }, 60_000);

  it('a call whose record is refused (503 after the engine answered) leaves no intent behind to be called lost at the next start', async () => {
    const s = await app.createSession({ engine: 'sim-vllm' });
    const c = dialectCall('openai-chat', app.url, s.key, { stream: true, maxTokens: 200 });
    const res = await fetch(c.url, c.init);
    const reader = res.body!.getReader();
    // Output flows only after the call's intent was committed; from here on the engine answer cannot be.
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('data:');
    const locker = new Database(sqliteDatabaseOf(app.store).path);
    locker.exec('BEGIN IMMEDIATE');
    let text = '';
    try {
      for (;;) { const r = await reader.read(); if (r.done) break; text += new TextDecoder().decode(r.value); }
    } finally {
      locker.exec('COMMIT');
      locker.close();
    }
    expect(text).toMatch(/store is busy/);
    await app.store.writer.flush();
    const reader2 = new Database(sqliteDatabaseOf(app.store).path, { readonly: true });
    try {
      expect(reader2.prepare('SELECT COUNT(*) AS n FROM call_intents WHERE session_id = ?').get(s.id)).toEqual({ n: 0 });
    } finally {
      reader2.close();
    }
    // The agent's retry is the session's only turn; nothing is incomplete.
    expect((await call('openai-chat', s.key, false)).status).toBe(200);
    const session = await app.api(`/api/sessions/${s.id}`);
    expect(session.completionCount).toBe(1);
    expect(session.custody).not.toBe('incomplete');
  }, 60_000);
});
