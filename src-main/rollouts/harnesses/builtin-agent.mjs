#!/usr/bin/env node
// Rollgate's builtin agent: a small tool-using agent that speaks OpenAI chat completions.
// Plain Node (>= 18, global fetch), no dependencies, so it runs anywhere Rollgate runs.
//
//   OPENAI_BASE_URL=http://127.0.0.1:8321/s/<key>/v1 OPENAI_API_KEY=<key> OPENAI_MODEL=Qwen/Qwen3-8B \
//     node builtin-agent.mjs [--max-turns 8] [--stream] "What is 17 * 23?"
//
// Tools: calculator {expression}, read_file {path}, write_file {path, content}, run {command}
// (paths stay inside the current folder; `run` uses /bin/sh -c in it). Loops until the model answers
// without a tool call (the final answer, printed to stdout) or the turn limit (exit 3).
// Progress goes to stderr; stdout carries only the final answer. Exit: 0 answer, 1 error, 3 turn limit.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';

const argv = process.argv.slice(2);
let maxTurns = Number(process.env.ROLLGATE_MAX_TURNS ?? 8);
let stream = process.env.ROLLGATE_AGENT_STREAM === '1';
const words = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--max-turns') maxTurns = Number(argv[++i]);
  else if (argv[i] === '--stream') stream = true;
  else if (argv[i] === '--') { words.push(...argv.slice(i + 1)); break; }
  else words.push(argv[i]);
}
const prompt = words.length ? words.join(' ') : (process.env.ROLLGATE_PROMPT ?? '');
const baseUrl = (process.env.OPENAI_BASE_URL ?? '').replace(/\/$/, '');
const apiKey = process.env.OPENAI_API_KEY ?? '';
const model = process.env.OPENAI_MODEL ?? 'default';
const log = (...a) => process.stderr.write(`[builtin-agent] ${a.join(' ')}\n`);

if (!baseUrl || !prompt) {
  log('usage: OPENAI_BASE_URL=… OPENAI_API_KEY=… OPENAI_MODEL=… builtin-agent.mjs [--max-turns N] [--stream] PROMPT');
  process.exit(1);
}

const SYSTEM = 'You are a careful assistant working in a folder on the user\'s machine. Use the tools when they help: '
  + 'calculator for arithmetic, read_file and write_file for files, run for shell commands. '
  + 'When you are done, reply without calling a tool and end your reply with a line "The answer is <answer>."';

const TOOLS = [
  { type: 'function', function: { name: 'calculator', description: 'Evaluate an arithmetic expression (+ - * / % ^, parentheses, sqrt, abs, round, floor, ceil, min, max).', parameters: { type: 'object', properties: { expression: { type: 'string', description: 'e.g. 12 * (3 + 4)' } }, required: ['expression'] } } },
  { type: 'function', function: { name: 'read_file', description: 'Read a text file in the working folder.', parameters: { type: 'object', properties: { path: { type: 'string', description: 'path relative to the working folder' } }, required: ['path'] } } },
  { type: 'function', function: { name: 'write_file', description: 'Write (create or replace) a text file in the working folder.', parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] } } },
  { type: 'function', function: { name: 'run', description: 'Run a shell command in the working folder and return its exit code, stdout and stderr.', parameters: { type: 'object', properties: { command: { type: 'string', description: 'a /bin/sh command line' } }, required: ['command'] } } },
];

// ---- tools ----

function calculate(expr) {
  const src = String(expr).replace(/\*\*/g, '^').replace(/\s+/g, '');
  let i = 0;
  const fail = (msg) => { throw new Error(`${msg} at position ${i} in ${JSON.stringify(String(expr))}`); };
  const FUNCS = { sqrt: Math.sqrt, abs: Math.abs, round: Math.round, floor: Math.floor, ceil: Math.ceil, min: Math.min, max: Math.max };
  const primary = () => {
    if (src[i] === '(') { i++; const v = add(); if (src[i] !== ')') fail('expected )'); i++; return v; }
    if (src[i] === '-') { i++; return -pow(); }
    if (src[i] === '+') { i++; return pow(); }
    const fn = /^[a-z]+/.exec(src.slice(i));
    if (fn) {
      const f = FUNCS[fn[0]];
      if (!f) fail(`unknown function ${fn[0]}`);
      i += fn[0].length;
      if (src[i] !== '(') fail('expected (');
      i++;
      const args = [add()];
      while (src[i] === ',') { i++; args.push(add()); }
      if (src[i] !== ')') fail('expected )');
      i++;
      return f(...args);
    }
    const m = /^(\d+\.?\d*|\.\d+)(e[-+]?\d+)?/i.exec(src.slice(i));
    if (!m) fail('expected a number');
    i += m[0].length;
    return Number(m[0]);
  };
  const pow = () => { const b = primary(); if (src[i] === '^') { i++; return b ** pow(); } return b; };
  const mul = () => {
    let v = pow();
    while (src[i] === '*' || src[i] === '/' || src[i] === '%') { const op = src[i++]; const r = pow(); v = op === '*' ? v * r : op === '/' ? v / r : v % r; }
    return v;
  };
  const add = () => {
    let v = mul();
    while (src[i] === '+' || src[i] === '-') { const op = src[i++]; const r = mul(); v = op === '+' ? v + r : v - r; }
    return v;
  };
  const v = add();
  if (i !== src.length) fail('unexpected character');
  if (!Number.isFinite(v)) throw new Error('the result is not a finite number');
  return Number.isInteger(v) ? String(v) : String(Math.round(v * 1e10) / 1e10);
}

const root = resolve(process.cwd());
function inside(path) {
  const p = resolve(root, String(path ?? ''));
  if (p !== root && !p.startsWith(root + sep)) throw new Error(`path outside the working folder: ${path}`);
  return p;
}
const clip = (s, n = 16000) => (s.length > n ? `${s.slice(0, n)}\n…[${s.length - n} more chars]` : s);

function runTool(name, rawArgs) {
  let args;
  try { args = rawArgs ? JSON.parse(rawArgs) : {}; } catch { return `error: arguments are not valid JSON: ${rawArgs}`; }
  try {
    switch (name) {
      case 'calculator': return calculate(args.expression ?? args.expr ?? '');
      case 'read_file': return clip(readFileSync(inside(args.path), 'utf8'));
      case 'write_file': {
        const p = inside(args.path);
        mkdirSync(dirname(p), { recursive: true });
        writeFileSync(p, String(args.content ?? ''));
        return `wrote ${Buffer.byteLength(String(args.content ?? ''))} bytes to ${args.path}`;
      }
      case 'run': {
        const r = spawnSync('/bin/sh', ['-c', String(args.command ?? '')], { cwd: root, encoding: 'utf8', timeout: 60_000, maxBuffer: 4 * 1024 * 1024 });
        if (r.error && !r.stdout && !r.stderr) return JSON.stringify({ exit_code: null, stdout: '', stderr: r.error.message });
        return JSON.stringify({ exit_code: r.status, stdout: clip(r.stdout ?? ''), stderr: clip(r.stderr ?? '', 4000) });
      }
      default: return `error: unknown tool ${name}`;
    }
  } catch (e) {
    return `error: ${e.message}`;
  }
}

// ---- model calls ----

async function readSse(res) {
  const msg = { role: 'assistant', content: '', reasoning: '', tool_calls: [] };
  const decoder = new TextDecoder();
  let buf = '';
  let finish = null;
  let responseId = null;
  for await (const chunk of res.body) {
    buf += decoder.decode(chunk, { stream: true });
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, '');
      buf = buf.slice(nl + 1);
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data === '[DONE]') continue;
      const ev = JSON.parse(data);
      if (ev.id) responseId = ev.id;
      if (ev.error) throw new Error(`stream error: ${ev.error.message ?? JSON.stringify(ev.error)}`);
      const choice = ev.choices?.[0];
      if (!choice) continue;
      const d = choice.delta ?? {};
      if (d.content) msg.content += d.content;
      if (d.reasoning ?? d.reasoning_content) msg.reasoning += d.reasoning ?? d.reasoning_content;
      for (const tc of d.tool_calls ?? []) {
        const c = (msg.tool_calls[tc.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
        if (tc.id) c.id = tc.id;
        if (tc.function?.name) c.function.name += tc.function.name;
        if (tc.function?.arguments) c.function.arguments += tc.function.arguments;
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
  }
  msg.tool_calls = msg.tool_calls.filter(Boolean);
  return { message: msg, finish, id: responseId };
}

async function complete(messages) {
  const body = { model, messages, tools: TOOLS, tool_choice: 'auto', max_tokens: 4096, stream };
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, 'user-agent': 'rollgate-builtin-agent/1' },
      body: JSON.stringify(body),
    });
    if ((res.status === 429 || res.status === 502 || res.status === 503) && attempt < 4) {
      const wait = Number(res.headers.get('retry-after')) * 1000 || 500 * 2 ** attempt;
      log(`HTTP ${res.status}, retrying in ${wait} ms`);
      await res.arrayBuffer().catch(() => undefined);
      await new Promise((r) => setTimeout(r, wait));
      continue;
    }
    if (!res.ok) throw new Error(`HTTP ${res.status}: ${(await res.text()).slice(0, 2000)}`);
    if (stream) return readSse(res);
    const json = await res.json();
    const choice = json.choices?.[0];
    if (!choice) throw new Error(`no choices in response: ${JSON.stringify(json).slice(0, 500)}`);
    const m = choice.message ?? {};
    return { message: { role: 'assistant', content: m.content ?? '', reasoning: m.reasoning ?? m.reasoning_content ?? '', tool_calls: m.tool_calls ?? [] }, finish: choice.finish_reason, id: json.id };
  }
}

function finalText(content) {
  return String(content ?? '').replace(/<think>[\s\S]*?<\/think>/g, '').trim();
}

async function main() {
  const messages = [{ role: 'system', content: SYSTEM }, { role: 'user', content: prompt }];
  let last = '';
  for (let turn = 1; turn <= maxTurns; turn++) {
    const { message, finish } = await complete(messages);
    const assistant = { role: 'assistant', content: message.content || (message.tool_calls.length ? null : '') };
    if (message.reasoning) assistant.reasoning = message.reasoning;
    if (message.tool_calls.length) assistant.tool_calls = message.tool_calls;
    messages.push(assistant);
    last = finalText(message.content);
    if (!message.tool_calls.length) {
      log(`turn ${turn}: final answer (finish_reason ${finish})`);
      process.stdout.write(`${last}\n`);
      return 0;
    }
    for (const call of message.tool_calls) {
      const result = runTool(call.function.name, call.function.arguments);
      log(`turn ${turn}: ${call.function.name}(${call.function.arguments.slice(0, 200)}) -> ${result.slice(0, 200).replace(/\n/g, '\\n')}`);
      messages.push({ role: 'tool', tool_call_id: call.id, content: result });
    }
  }
  log(`turn limit (${maxTurns}) reached without a final answer`);
  if (last) process.stdout.write(`${last}\n`);
  return 3;
}

main().then((code) => process.exit(code), (err) => {
  log(`error: ${err?.message ?? err}`);
  process.exit(1);
});
