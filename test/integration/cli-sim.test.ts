// `rollgate sim` flags: the fault knobs a researcher uses to rehearse engine failures without a GPU.
import { afterAll, describe, expect, it } from 'vitest';
import { MODEL, startCli, type Child } from './fault-helpers.js';

const children: Child[] = [];
afterAll(async () => { await Promise.all(children.map((c) => c.kill('SIGKILL'))); });

const chat = (url: string, stream: boolean) => fetch(`${url}/v1/chat/completions`, {
  method: 'POST', headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Hello' }], stream }),
});

describe('rollgate sim', () => {
  it('--failure-rate 1 answers every call with an HTTP 500; --error-rate 1 ends every stream in an error event', async () => {
    const failing = await startCli(['sim', '--flavor', 'vllm', '--failure-rate', '1']);
    children.push(failing);
    const res = await chat(failing.url, false);
    expect(res.status).toBe(500);
    await res.text();

    const erroring = await startCli(['sim', '--flavor', 'sglang', '--error-rate', '1', '--max-model-len', '4096']);
    children.push(erroring);
    const stream = await chat(erroring.url, true);
    expect(stream.status).toBe(200);
    expect(await stream.text()).toMatch(/"error"/);
    const models = await (await fetch(`${erroring.url}/v1/models`)).json() as { data: Array<{ max_model_len?: number }> };
    expect(models.data[0]!.max_model_len).toBe(4096);
  }, 60_000);

  it('--family makes it speak a model family: its model name, its format, its tool calls', async () => {
    const sim = await startCli(['sim', '--flavor', 'sglang', '--family', 'gpt-oss']);
    children.push(sim);
    const models = await (await fetch(`${sim.url}/v1/models`)).json() as { data: Array<{ id: string }> };
    expect(models.data[0]!.id).toBe('openai/gpt-oss-20b');
    const tools = [{ type: 'function', function: { name: 'calculator', parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] } } }];
    const res = await fetch(`${sim.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-oss-20b', messages: [{ role: 'user', content: 'What is 6*7? Use the calculator.' }], tools }),
    });
    const json = await res.json() as { choices: Array<{ message: { tool_calls: Array<{ function: { name: string; arguments: string } }> } }> };
    // As vLLM's harmony parser returns them: JSON arguments re-dumped the Python way.
    expect(json.choices[0]!.message.tool_calls[0]!.function).toEqual({ name: 'calculator', arguments: '{"expression": "6*7"}' });
    await expect(startCli(['sim', '--flavor', 'vllm', '--family', 'llama'], { timeoutMs: 30_000 })).rejects.toThrow(/family must be one of qwen3, qwen3-coder, gpt-oss, glm45, deepseek-v31/);
  }, 60_000);

  it('rejects a rate outside 0..1', async () => {
    await expect(startCli(['sim', '--flavor', 'vllm', '--drop-rate', '2'], { timeoutMs: 30_000 })).rejects.toThrow(/between 0 and 1/);
  }, 40_000);
});
