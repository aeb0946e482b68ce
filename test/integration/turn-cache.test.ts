// The gateway's per-session turn cache (token mode reuses a session's sampled ids from it) is bounded (issue
// 18, item 11): a session's turns go when the session ends, however it ends, and the whole cache stays under a
// byte cap (100 finished sessions used to keep ~80 MB alive for good).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

const CAP = 150_000;
let app: TestApp;
beforeAll(async () => { app = await startTestApp({ turnCacheBytes: CAP }); });
afterAll(async () => { await app.stop(); });

const filler = Array.from({ length: 60 }, (_, i) => `line ${i}: the quick brown fox jumps over the lazy dog`).join('\n');

async function turns(key: string, n: number): Promise<void> {
  const messages: Array<{ role: string; content: string }> = [{ role: 'system', content: filler }];
  for (let t = 0; t < n; t++) {
    messages.push({ role: 'user', content: `Question ${t}: what is ${t} + 2?` });
    const res = await fetch(`${app.url}/s/${key}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'Qwen/Qwen3-8B', messages, max_tokens: 48 }),
    });
    expect(res.status).toBe(200);
    messages.push({ role: 'assistant', content: (await res.json()).choices[0].message.content ?? '' });
  }
}

describe('per-session turn cache', () => {
  it('lets go of sessions as they finish', async () => {
    for (let i = 0; i < 3; i++) {
      const s = await app.createSession({ engine: 'sim-sglang' });
      await turns(s.key, 2);
      expect(app.turns.history(s.id)).toHaveLength(2);
      await app.api(`/api/sessions/${s.id}/finish`, { method: 'POST', body: '{}' });
      expect(app.turns.history(s.id)).toHaveLength(0);
    }
    expect(app.turns.size).toBe(0);
    expect(app.turns.bytes).toBe(0);
  });

  it('stays under its byte cap with many live sessions, and an evicted session still carries on', async () => {
    const live = [];
    for (let i = 0; i < 6; i++) {
      const s = await app.createSession({ engine: 'sim-sglang' });
      await turns(s.key, 3);
      live.push(s);
      expect(app.turns.bytes).toBeLessThanOrEqual(CAP);
    }
    expect(app.turns.size).toBeLessThan(live.length); // the oldest went
    expect(app.turns.history(live[0].id)).toHaveLength(0);
    await turns(live[0].key, 2); // token mode renders its prompt afresh
    expect(app.turns.bytes).toBeLessThanOrEqual(CAP);
  });
});
