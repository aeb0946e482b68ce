// Export presets (issue 19): for each trainer, a small reader written from that trainer's documented
// field list loads the exported file and checks the shapes — verl's DataProto keys, slime's Sample,
// verifiers' processed outputs, TRL's conversational SFT rows — and every row's sample facts (one final
// row per sample, num_traces, finish reason, turn boundaries, sampling parameters, model, tokenizer).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runExport, type ExportCommandOptions } from '../../src-main/commands/export.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { agentTurn, startAgent } from './traces-agent.js';

type Row = Record<string, any>;
let app: TestApp;
let out: string;
let batchId: string;
let activeSession: string;

beforeAll(async () => {
  app = await startTestApp({ simSkill: 0.7 });
  out = mkdtempSync(join(tmpdir(), 'rollgate-presets-'));
  const { id } = await app.api('/api/batches', { method: 'POST', body: JSON.stringify({ dataset: 'demo:calculator', harness: 'builtin', engine: 'sim-vllm', n: 2, concurrency: 4 }) });
  batchId = id;
  for (let i = 0; ; i++) {
    const view = await app.api(`/api/batches/${id}`);
    if (view.status === 'completed') break;
    if (!['queued', 'running'].includes(view.status) || i > 600) throw new Error(`batch ${view.status}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  // a manual session nobody finished: left out by default
  const loose = await startAgent(app, 'sim-sglang');
  await agentTurn(loose, 'What is 6*7? Use the calculator.');
  activeSession = loose.sessionId;
}, 200_000);
afterAll(async () => {
  await app?.stop();
  if (out) rmSync(out, { recursive: true, force: true });
});

async function exportFile(name: string, opts: Partial<ExportCommandOptions>): Promise<Row[]> {
  const file = join(out, `${name}.jsonl`);
  const quiet = new PassThrough().resume();
  await runExport({ format: 'train', builder: 'prefix-merge', dataDir: app.dataDir, out: file, progress: false, ...opts }, { stdout: quiet, stderr: quiet });
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

const isMask = (m: unknown) => Array.isArray(m) && m.every((x) => x === 0 || x === 1);
const ints = (a: unknown) => Array.isArray(a) && a.every((x) => Number.isInteger(x));
const floats = (a: unknown) => Array.isArray(a) && a.every((x) => typeof x === 'number' && Number.isFinite(x) && x <= 0);

/** The facts every preset row carries for its sample, whatever the trainer. */
function checkSampleFacts(rows: Row[]): void {
  const bySession = new Map<string, Row[]>();
  for (const r of rows) bySession.set(r.session_id, [...(bySession.get(r.session_id) ?? []), r]);
  for (const [sid, list] of bySession) {
    expect(list.filter((r) => r.is_final === true), `one final row for ${sid}`).toHaveLength(1);
    for (const r of list) {
      expect(r.num_traces).toBe(list.length);
      expect(['stop', 'length', 'tool_calls', 'abort', 'error', null]).toContain(r.finish_reason);
      expect(r.truncated).toBe(r.finish_reason === 'length');
      expect(r.turns.length).toBeGreaterThan(0);
      expect(r.turns.every((t: Row) => Number.isInteger(t.output_start) && Number.isInteger(t.output_length))).toBe(true);
      expect(typeof r.sampling).toBe('object');
      expect(r.model).toBe('Qwen/Qwen3-8B');
      expect(r.tokenizer).toBe('builtin:qwen3');
    }
  }
}

// verl: DataProto batch keys prompts/responses/response_mask/rollout_log_probs, non-tensor uid (GRPO group)
function readVerl(rows: Row[]) {
  for (const r of rows) {
    for (const k of ['uid', 'prompts', 'responses', 'response_mask', 'rollout_log_probs']) expect(r, k).toHaveProperty(k);
    expect(typeof r.uid).toBe('string');
    expect(ints(r.prompts) && ints(r.responses)).toBe(true);
    expect(r.response_mask).toHaveLength(r.responses.length);
    expect(r.rollout_log_probs).toHaveLength(r.responses.length);
    expect(isMask(r.response_mask)).toBe(true);
    expect(floats(r.rollout_log_probs)).toBe(true);
    r.response_mask.forEach((m: number, i: number) => { if (m === 0) expect(r.rollout_log_probs[i]).toBe(0); });
    expect(Number.isInteger(r.num_turns)).toBe(true);
  }
  return rows;
}

// slime: Sample.tokens (prompt + response), response_length, loss_mask / rollout_log_probs over the response,
// integer group_index and index, status, weight_versions as strings
function readSlime(rows: Row[]) {
  for (const r of rows) {
    expect(ints(r.tokens)).toBe(true);
    expect(Number.isInteger(r.response_length) && r.response_length <= r.tokens.length).toBe(true);
    expect(r.loss_mask).toHaveLength(r.response_length);
    expect(r.rollout_log_probs).toHaveLength(r.response_length);
    expect(isMask(r.loss_mask)).toBe(true);
    expect(Number.isInteger(r.group_index) && r.group_index >= 0).toBe(true);
    expect(Number.isInteger(r.index)).toBe(true);
    expect(['completed', 'truncated', 'aborted', 'failed', 'pending']).toContain(r.status);
    expect(r.weight_versions.every((v: unknown) => typeof v === 'string')).toBe(true);
    expect(typeof r.reward === 'number' || r.reward === null).toBe(true);
  }
  return rows;
}

// verifiers: prompt_ids + prompt_mask (0 on the prompt), completion_ids + completion_mask + completion_logprobs, reward
function readVerifiers(rows: Row[]) {
  for (const r of rows) {
    expect(r.prompt_mask).toHaveLength(r.prompt_ids.length);
    expect(r.prompt_mask.every((m: number) => m === 0)).toBe(true);
    expect(r.completion_mask).toHaveLength(r.completion_ids.length);
    expect(r.completion_logprobs).toHaveLength(r.completion_ids.length);
    expect(isMask(r.completion_mask) && ints(r.completion_ids) && floats(r.completion_logprobs)).toBe(true);
  }
  return rows;
}

// TRL SFTTrainer, conversational: messages [{role, content, …}], tools optional; Qwen3's template reads reasoning_content
function readTrlSft(rows: Row[]) {
  for (const r of rows) {
    expect(Array.isArray(r.messages) && r.messages.length >= 2).toBe(true);
    for (const m of r.messages) {
      expect(['system', 'user', 'assistant', 'tool']).toContain(m.role);
      expect(m).not.toHaveProperty('reasoning');
    }
    expect(r.messages.at(-1).role).toBe('assistant');
    if (r.tools) expect(r.tools.every((t: Row) => t.type === 'function' && typeof t.function.name === 'string')).toBe(true);
  }
  return rows;
}

describe('export presets on a calculator batch (sim-vllm)', () => {
  it('verl', async () => {
    const rows = readVerl(await exportFile('verl', { preset: 'verl', batch: batchId }));
    expect(rows.length).toBeGreaterThan(0);
    checkSampleFacts(rows);
    expect(new Set(rows.map((r) => r.uid)).size).toBe(new Set(rows.map((r) => r.task_id)).size);
  });

  it('slime: integer group_index per task, one final row per sample', async () => {
    const rows = readSlime(await exportFile('slime', { preset: 'slime', batch: batchId }));
    checkSampleFacts(rows);
    const groupOf = new Map<string, number>();
    for (const r of rows) {
      if (groupOf.has(r.task_id)) expect(r.group_index).toBe(groupOf.get(r.task_id));
      groupOf.set(r.task_id, r.group_index);
    }
    expect(new Set(groupOf.values()).size).toBe(groupOf.size);
    expect(rows.map((r) => r.index)).toEqual(rows.map((_, i) => i));
  });

  it('verifiers', async () => {
    checkSampleFacts(readVerifiers(await exportFile('verifiers', { preset: 'verifiers', batch: batchId })));
  });

  it('trl-sft: assistant reasoning under reasoning_content', async () => {
    const rows = readTrlSft(await exportFile('trl-sft', { preset: 'trl-sft', batch: batchId }));
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.some((r) => r.messages.some((m: Row) => m.role === 'assistant' && typeof m.reasoning_content === 'string'))).toBe(true);
    expect(rows.every((r) => typeof r.is_final === 'boolean' && Number.isInteger(r.num_traces))).toBe(true);
  });
});

describe('export filters and scope', () => {
  it('leaves unfinished sessions out by default, keeps them with --status all; --has-reward drops unrewarded traces', async () => {
    const byDefault = await exportFile('default', {});
    expect(byDefault.some((r) => r.session_id === activeSession)).toBe(false);
    expect(byDefault.every((r) => r.reward !== null)).toBe(true);
    const all = await exportFile('all', { status: ['finished', 'active'] });
    expect(all.some((r) => r.session_id === activeSession)).toBe(true);
    const rewarded = await exportFile('rewarded', { status: ['finished', 'active'], hasReward: true });
    expect(rewarded.some((r) => r.session_id === activeSession)).toBe(false);
    expect(rewarded.length).toBe(byDefault.length);
  });

  it('an unknown batch or session is an error, in the CLI and the API', async () => {
    await expect(exportFile('nope', { batch: 'bat_nope' })).rejects.toThrow(/unknown batch bat_nope/);
    await expect(exportFile('nope2', { session: 'ses_nope' })).rejects.toThrow(/unknown session ses_nope/);
    const res = await fetch(`${app.url}/api/export?batch=bat_nope&preset=verl`);
    expect(res.status).toBe(404);
    expect((await res.json()).error.message).toMatch(/unknown batch/);
    expect((await fetch(`${app.url}/api/export?preset=nemo`)).status).toBe(400);
  });

  it('the API serves the same preset rows as the CLI', async () => {
    const text = await (await fetch(`${app.url}/api/export?batch=${batchId}&preset=slime`)).text();
    const api = text.trim().split('\n').map((l) => JSON.parse(l));
    const cli = await exportFile('slime-again', { preset: 'slime', batch: batchId });
    expect(api.map((r) => r.trace_id)).toEqual(cli.map((r) => r.trace_id));
    expect(api.map((r) => r.tokens.length)).toEqual(cli.map((r) => r.tokens.length));
  });
});
