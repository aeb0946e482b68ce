// Shared by the fault and security tests: one request per agent dialect over raw HTTP, SSE reading, and
// standalone child processes (a sim engine, `rollgate serve`) that a test can SIGKILL.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect } from 'vitest';
import { REPO_ROOT } from '../helpers/paths.js';

export type AgentDialect = 'openai-chat' | 'responses' | 'anthropic' | 'gemini';
export const AGENT_DIALECTS: AgentDialect[] = ['openai-chat', 'responses', 'anthropic', 'gemini'];
export const MODEL = 'Qwen/Qwen3-8B';

export interface DialectCall { url: string; init: RequestInit }

/** One agent call in the given dialect; the session key goes in the path (`/s/<key>/…`). */
export function dialectCall(d: AgentDialect, baseUrl: string, key: string, opts: { stream: boolean; text?: string; maxTokens?: number; headers?: Record<string, string>; extra?: Record<string, unknown> }): DialectCall {
  const text = opts.text ?? 'Count slowly from one to forty, one number per line.';
  const max = opts.maxTokens ?? 200;
  const root = `${baseUrl}/s/${key}`;
  const headers = { 'content-type': 'application/json', ...opts.headers };
  const post = (url: string, body: unknown): DialectCall => ({ url, init: { method: 'POST', headers, body: JSON.stringify(body) } });
  switch (d) {
    case 'openai-chat':
      return post(`${root}/v1/chat/completions`, { model: MODEL, messages: [{ role: 'user', content: text }], max_tokens: max, stream: opts.stream, ...opts.extra });
    case 'responses':
      return post(`${root}/v1/responses`, { model: MODEL, input: text, max_output_tokens: max, stream: opts.stream, store: false, ...opts.extra });
    case 'anthropic':
      return post(`${root}/v1/messages`, { model: MODEL, max_tokens: max, messages: [{ role: 'user', content: text }], stream: opts.stream, ...opts.extra });
    case 'gemini':
      return post(`${root}/v1beta/models/qwen3:${opts.stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
        { contents: [{ role: 'user', parts: [{ text }] }], generationConfig: { maxOutputTokens: max }, ...opts.extra });
  }
}

export interface SseEvent { event?: string; data: string }

export function parseSse(text: string): SseEvent[] {
  const out: SseEvent[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length) out.push({ event, data: data.join('\n') });
  }
  return out;
}

const json = (s: string): any => { try { return JSON.parse(s); } catch { return undefined; } };

/** The event carries generated text (the agent has started to receive the answer). */
export function carriesOutput(d: AgentDialect, e: SseEvent): boolean {
  const j = json(e.data);
  if (!j) return false;
  switch (d) {
    case 'openai-chat': { const delta = j.choices?.[0]?.delta; return !!(delta?.content || delta?.reasoning || delta?.reasoning_content); }
    case 'responses': return typeof j.type === 'string' && j.type.endsWith('.delta') && !!j.delta;
    case 'anthropic': return j.type === 'content_block_delta';
    case 'gemini': return !!j.candidates?.[0]?.content?.parts?.some((p: any) => p.text);
  }
}

/** Asserts that the stream ends with the dialect's own error event (and no success terminator). */
export function expectStreamError(d: AgentDialect, events: SseEvent[]): void {
  const parsed = events.map((e) => ({ ...e, j: json(e.data) }));
  switch (d) {
    case 'openai-chat': {
      const err = parsed.find((e) => e.j?.error);
      expect(err, 'an OpenAI error chunk').toBeTruthy();
      expect(err!.j.error).toMatchObject({ message: expect.any(String), type: expect.any(String) });
      expect(parsed.some((e) => e.j?.choices?.[0]?.finish_reason)).toBe(false);
      expect(events.at(-1)?.data).toBe('[DONE]');
      break;
    }
    case 'responses': {
      expect(parsed.some((e) => e.event === 'error' && e.j?.type === 'error' && typeof e.j.message === 'string')).toBe(true);
      const last = parsed.at(-1)!;
      expect(last.event).toBe('response.failed');
      expect(last.j.response.status).toBe('failed');
      expect(parsed.some((e) => e.event === 'response.completed')).toBe(false);
      break;
    }
    case 'anthropic': {
      const last = parsed.at(-1)!;
      expect(last.event).toBe('error');
      expect(last.j).toMatchObject({ type: 'error', error: { type: expect.any(String), message: expect.any(String) } });
      expect(parsed.some((e) => e.event === 'message_stop')).toBe(false);
      break;
    }
    case 'gemini': {
      const last = parsed.at(-1)!;
      expect(last.j?.error).toMatchObject({ code: expect.any(Number), message: expect.any(String), status: expect.any(String) });
      expect(parsed.some((e) => e.j?.candidates?.[0]?.finishReason)).toBe(false);
      break;
    }
  }
}

/** Asserts a non-streaming error body in the dialect's envelope, with the given HTTP status. */
export function expectErrorBody(d: AgentDialect, status: number, res: { status: number; body: any }): void {
  expect(res.status).toBe(status);
  switch (d) {
    case 'openai-chat':
    case 'responses':
      expect(res.body.error).toMatchObject({ message: expect.any(String) });
      break;
    case 'anthropic':
      expect(res.body).toMatchObject({ type: 'error', error: { type: expect.any(String), message: expect.any(String) } });
      break;
    case 'gemini':
      expect(res.body.error).toMatchObject({ code: status, message: expect.any(String), status: expect.any(String) });
      break;
  }
}

/**
 * Starts a streaming call and resolves once the agent has received generated text, with a function that
 * reads the rest of the stream (or cancels it).
 */
export async function streamUntilOutput(d: AgentDialect, call: DialectCall, timeoutMs = 15_000): Promise<{ status: number; rest(): Promise<SseEvent[]>; cancel(): Promise<void>; abort: AbortController }> {
  const abort = new AbortController();
  const res = await fetch(call.url, { ...call.init, signal: abort.signal });
  if (!res.body) throw new Error(`no body (HTTP ${res.status})`);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (Date.now() > deadline) throw new Error(`no output within ${timeoutMs} ms: ${text.slice(0, 500)}`);
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended before any output (HTTP ${res.status}): ${text.slice(0, 1000)}`);
    text += decoder.decode(value, { stream: true });
    if (parseSse(text).some((e) => carriesOutput(d, e))) break;
  }
  return {
    status: res.status,
    abort,
    async rest() {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      return parseSse(text);
    },
    async cancel() { abort.abort(); await reader.cancel().catch(() => undefined); },
  };
}

export async function waitFor<T>(what: string, fn: () => T | Promise<T>, timeoutMs = 10_000, everyMs = 25): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await fn();
    if (last) return last as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

// ---- child processes ----

/** The project's own Node (never a wrapper script: SIGKILL must hit the server itself). */
const NODE = existsSync(resolve(REPO_ROOT, 'node_modules/.bin/node')) ? resolve(REPO_ROOT, 'node_modules/.bin/node') : process.execPath;

export interface Child { child: ChildProcess; url: string; output(): string; kill(signal?: NodeJS.Signals): Promise<void>; exited: Promise<void> }

/** `node --import tsx src-main/cli.ts <args>` in its own process; resolves when it prints `listening on <url>`. */
export function startCli(args: string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Child> {
  const child = spawn(NODE, ['--import', 'tsx', 'src-main/cli.ts', ...args], { cwd: REPO_ROOT, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const kill = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    const t = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  };
  return new Promise((res, rej) => {
    const timer = setTimeout(() => { void kill('SIGKILL'); rej(new Error(`not ready after ${opts.timeoutMs ?? 60_000} ms:\n${out}`)); }, opts.timeoutMs ?? 60_000);
    const onData = (b: Buffer) => {
      out += b.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) { clearTimeout(timer); res({ child, url: m[1]!, output: () => out, kill, exited }); }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code, sig) => { clearTimeout(timer); rej(new Error(`exited (${code ?? sig}) before it was ready:\n${out}`)); });
  });
}
