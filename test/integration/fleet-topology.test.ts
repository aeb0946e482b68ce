// Topology: YAML validation, engines edited through the API and persisted, unreachable replicas (issue 6).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src-main/app.js';
import { parseTopology } from '../../src-main/engines/topology.js';
import { startSimEngine, type SimEngine } from '../../src-main/engines/sim/index.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { chat, MODEL } from '../helpers/fleet.js';

describe('topology files', () => {
  it('parses a valid file and defaults the mode per kind', () => {
    const engines = parseTopology(`engines:\n  - {id: a, kind: vllm, replicas: [http://127.0.0.1:9000], model: ${MODEL}}\n  - {id: b, kind: sglang, replicas: [http://127.0.0.1:9001], model: ${MODEL}}\n`);
    expect(engines.map((e) => e.mode)).toEqual(['chat', 'token']);
  });

  it.each([
    ['engines:\n  - {id: a, kind: tgi, replicas: [http://x:1], model: m}\n', /engines\.0\.kind/],
    ['engines:\n  - {id: a, kind: vllm, replicas: [not a url], model: m}\n', /engines\.0\.replicas\.0/],
    ['engines:\n  - {id: a, kind: vllm, replicas: [], model: m}\n', /engines\.0\.replicas/],
    ['engines:\n  - {id: a, kind: vllm, replicas: [http://x:1], model: m}\n  - {id: a, kind: vllm, replicas: [http://x:2], model: m}\n', /duplicate engine id a/],
    ['engines: [\n', /not valid YAML/],
    ['engines:\n  - {id: a, kind: vllm, replicas: [http://x:1], model: m, colour: red}\n', /colour|Unrecognized/],
  ])('rejects %j with a clear error', (text, message) => {
    expect(() => parseTopology(text, 'topo.yaml')).toThrow(message);
  });

  it('rollgate serve exits with the error for a bad file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rollgate-topo-'));
    try {
      writeFileSync(join(dir, 'topo.yaml'), 'engines:\n  - {id: a, kind: tgi, replicas: [http://127.0.0.1:1], model: m}\n');
      const run = promisify(execFile)(join(REPO_ROOT, 'node_modules', '.bin', 'tsx'), ['src-main/cli.ts', 'serve', '--port', '0', '--data-dir', dir, '--topology', join(dir, 'topo.yaml')], { cwd: REPO_ROOT, timeout: 60_000 });
      const err = await run.then(() => null, (e) => e);
      expect(err?.code).toBe(1);
      expect(err.stderr).toMatch(/topo\.yaml: engines\.0\.kind/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('engines through the control API', () => {
  let sim: SimEngine;
  let dataDir: string;
  beforeAll(async () => {
    sim = await startSimEngine({ flavor: 'vllm', seed: 5, skill: 1, maxModelLen: 131072, ttftMs: 0, perTokenMs: 0 });
    dataDir = mkdtempSync(join(tmpdir(), 'rollgate-topo-api-'));
  });
  afterAll(async () => {
    await sim?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const json = { 'content-type': 'application/json' };

  it('adds, edits, persists and removes engines; an unreachable replica shows unhealthy', async () => {
    let app = await createApp({ dataDir, port: 0, sim: false, healthIntervalMs: 100 });
    try {
      const bad = await fetch(`${app.url}/api/engines`, { method: 'POST', headers: json, body: JSON.stringify({ id: 'x', kind: 'tgi', replicas: [sim.url], model: MODEL }) });
      expect(bad.status).toBe(400);
      expect((await bad.json()).error.message).toMatch(/kind/);
      const badTok = await fetch(`${app.url}/api/engines`, { method: 'POST', headers: json, body: JSON.stringify({ id: 'x', kind: 'vllm', replicas: [sim.url], model: MODEL, tokenizer: '/nonexistent/model' }) });
      expect(badTok.status).toBe(400);
      expect((await badTok.json()).error.message).toMatch(/tokenizer/);

      const added = await fetch(`${app.url}/api/engines`, { method: 'POST', headers: json, body: JSON.stringify({ id: 'live', kind: 'vllm', replicas: [sim.url], model: MODEL }) });
      expect(added.status).toBe(201);
      const dead = await fetch(`${app.url}/api/engines`, { method: 'POST', headers: json, body: JSON.stringify({ id: 'dead', kind: 'vllm', replicas: ['http://127.0.0.1:9'], model: MODEL }) });
      expect(dead.status).toBe(201);
      expect((await fetch(`${app.url}/api/engines`, { method: 'POST', headers: json, body: JSON.stringify({ id: 'live', kind: 'vllm', replicas: [sim.url], model: MODEL }) })).status).toBe(409);

      await new Promise((r) => setTimeout(r, 500));
      const listed = await (await fetch(`${app.url}/api/engines`)).json();
      expect(listed.engines.find((e: any) => e.id === 'dead').replicas[0].healthy).toBe(false);
      expect(listed.engines.find((e: any) => e.id === 'live').replicas[0].healthy).toBe(true);

      const session = await (await fetch(`${app.url}/api/sessions`, { method: 'POST', headers: json, body: JSON.stringify({ engine: 'dead' }) })).json();
      const r = await chat(session.urls.openai, { messages: [{ role: 'user', content: 'hi' }] });
      expect(r.status).toBe(502);
      expect(r.json.error.message).toMatch(/unreachable/);

      const edited = await fetch(`${app.url}/api/engines/dead`, { method: 'PUT', headers: json, body: JSON.stringify({ kind: 'vllm', replicas: [sim.url], model: MODEL, mode: 'token' }) });
      expect(edited.status).toBe(200);
      expect((await edited.json()).mode).toBe('token');
    } finally {
      await app.close();
    }

    app = await createApp({ dataDir, port: 0, sim: false, healthIntervalMs: 100 });
    try {
      const listed = await (await fetch(`${app.url}/api/engines`)).json();
      expect(listed.engines.map((e: any) => [e.id, e.mode])).toEqual([['live', 'chat'], ['dead', 'token']]);
      const session = await (await fetch(`${app.url}/api/sessions`, { method: 'POST', headers: json, body: JSON.stringify({ engine: 'dead' }) })).json();
      expect((await chat(session.urls.openai, { messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
      expect((await fetch(`${app.url}/api/engines/dead`, { method: 'DELETE' })).status).toBe(200);
      expect((await fetch(`${app.url}/api/engines/dead`, { method: 'DELETE' })).status).toBe(404);
    } finally {
      await app.close();
    }
    app = await createApp({ dataDir, port: 0, sim: false });
    try {
      const listed = await (await fetch(`${app.url}/api/engines`)).json();
      expect(listed.engines.map((e: any) => e.id)).toEqual(['live']);
    } finally {
      await app.close();
    }
  });
});
