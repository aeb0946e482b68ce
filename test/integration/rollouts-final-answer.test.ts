// Final answers are stored as text (issue 19): an agent that colours its output for a terminal gets the
// ANSI codes stripped from the stored answer, and the exact evaluator compares the text.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

let app: TestApp;
beforeAll(async () => { app = await startTestApp(); });
afterAll(async () => { await app?.stop(); });

describe('final answers', () => {
  it('lose their ANSI colour codes', async () => {
    const agent = String.raw`printf '\033[1;32mThe answer is 4.\033[0m\n\033[2K'`;
    const { id } = await app.api('/api/batches', { method: 'POST', body: JSON.stringify({
      tasks: [{ id: 'colour', prompt: 'p', files: { 'agent.sh': agent }, expected: '4' }], harness: 'command', command: 'sh ./agent.sh', n: 1, runtime: 'local',
    }) });
    let view: any;
    for (let i = 0; i < 200; i++) {
      view = await app.api(`/api/batches/${id}`);
      if (!['queued', 'running'].includes(view.status)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const [s] = (await app.store.sessions.list({ batchId: id }));
    const run = await app.api(`/api/sessions/${s.id}/run`);
    expect(run.finalAnswer).toBe('The answer is 4.');
    expect(run.stdout).toContain('\u001b[1;32m');
    expect(s.reward).toBe(1);
  });
});
