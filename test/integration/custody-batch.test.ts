// Batch custody gate (issue 14): a batch with maxMaskedFraction on an engine whose captures keep failing
// stops with a clear error once enough traces are in, instead of producing mostly masked data.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimEngine, type SimEngine } from '../../src-main/engines/sim/index.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

const MODEL = 'Qwen/Qwen3-8B';
let sim: SimEngine;
let app: TestApp;
beforeAll(async () => {
  sim = await startSimEngine({ flavor: 'vllm', seed: 11, skill: 1, perTokenMs: 0, ttftMs: 0, missingIdsRate: 0.6 });
  app = await startTestApp({ sim: false, engines: [{ id: 'broken-ids', kind: 'vllm', replicas: [sim.url], model: MODEL, mode: 'chat', tokenizer: 'builtin:qwen3' }] });
});
afterAll(async () => {
  await app?.stop();
  await sim?.close();
});

// Two turns through the gateway; a failed call is answered with an error, which the agent ignores.
const agent = "const [u,k,m]=process.argv.slice(1);const msgs=[{role:'user',content:'Say hi.'}];"
  + "const call=()=>fetch(u+'/chat/completions',{method:'POST',headers:{'content-type':'application/json',authorization:'Bearer '+k},"
  + "body:JSON.stringify({model:m,messages:msgs,max_tokens:8})}).then(r=>r.json()).catch(()=>({}));"
  + "(async()=>{const a=await call();msgs.push({role:'assistant',content:a.choices?.[0]?.message?.content??'hi'},{role:'user',content:'Again.'});await call();console.log('done')})()";

describe('maxMaskedFraction', () => {
  it('stops a batch whose masked share passes the limit, saying why', async () => {
    const tasks = Array.from({ length: 30 }, (_, i) => ({ id: `t${i}`, prompt: 'hi' }));
    const { id } = await app.api('/api/batches', { method: 'POST', body: JSON.stringify({
      tasks, harness: 'command', engine: 'broken-ids', runtime: 'local', concurrency: 2, maxMaskedFraction: 0.2, maskedMinTraces: 6,
      command: `node -e "${agent}" {{OPENAI_BASE_URL}} {{API_KEY}} {{MODEL}}`,
    }) });
    let view: any;
    for (const end = Date.now() + 90_000; Date.now() < end;) {
      view = await app.api(`/api/batches/${id}`);
      if (!['queued', 'running'].includes(view.status)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(view.status).toBe('failed');
    expect(view.error).toMatch(/^stopped: \d+ of \d+ traces masked \(0\.\d+ > maxMaskedFraction 0\.2; missing-ids \d+\)/);
    // it stopped early: not every task ran
    const ran = view.tasks.filter((t: any) => t.samples.some((s: any) => s.sessionId)).length;
    expect(ran).toBeLessThan(tasks.length);
  });
});
