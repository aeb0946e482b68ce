// `tsx bench/profile.ts [openai|anthropic] [stream|json] [seconds]`: CPU profile of Rollgate alone under a closed-loop
// load against the canned engine (so the engine costs little), then the top self-time functions.
// The profile is kept in bench/results/prof-<timestamp>/rollgate.cpuprofile (open it in Chrome DevTools).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LoadClient, ROOT, startNode, stopAll } from './proc.js';

export function topFunctions(profilePath: string, n = 30): string[] {
  const p = JSON.parse(readFileSync(profilePath, 'utf8')) as { nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number };
  const dt = new Map<number, number>();
  p.samples.forEach((s, i) => dt.set(s, (dt.get(s) ?? 0) + (p.timeDeltas[i] ?? 0)));
  const self = new Map<string, number>();
  for (const node of p.nodes) {
    const f = node.callFrame;
    const k = `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}`;
    self.set(k, (self.get(k) ?? 0) + (dt.get(node.id) ?? 0));
  }
  const total = p.endTime - p.startTime;
  return [...self].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `${(v / 1000).toFixed(0).padStart(7)} ms ${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`);
}

async function main() {
  const dialect = (process.argv[2] ?? 'openai') as 'openai' | 'anthropic';
  const stream = (process.argv[3] ?? 'stream') === 'stream';
  const seconds = Number(process.argv[4] ?? 5);
  const tmp = mkdtempSync(join(tmpdir(), 'rollgate-prof-'));
  const profDir = join(ROOT, 'bench', 'results', `prof-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  mkdirSync(profDir, { recursive: true });
  const listening = /listening on (http:\/\/\S+)/;
  try {
    const engine = await startNode('canned', 'bench/canned-engine.ts', ['--port', '0', '--prompt-tokens', '40'], { ready: listening });
    const topology = join(tmp, 'topology.yaml');
    writeFileSync(topology, `engines:\n  - { id: canned, kind: vllm, replicas: ["${engine.url}"], model: "Qwen/Qwen3-8B", mode: chat }\n`);
    const rg = await startNode('rollgate', 'src-main/cli.ts', ['serve', '--no-sim', '--topology', topology, '--data-dir', join(tmp, 'data'), '--port', '0'],
      { ready: /Rollgate listening on (http:\/\/\S+)/, nodeArgs: ['--cpu-prof', '--cpu-prof-dir', profDir, '--cpu-prof-name', 'rollgate.cpuprofile'] });
    const keys: string[] = [];
    for (let i = 0; i < 32; i++) {
      const r = await fetch(`${rg.url}/api/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"engine":"canned"}' });
      keys.push(((await r.json()) as { key: string }).key);
    }
    const body = (key: string) => dialect === 'openai'
      ? { path: `/s/${key}/v1/chat/completions`, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'Qwen/Qwen3-8B', messages: [{ role: 'user', content: 'hello' }], max_tokens: 32, stream }) }
      : { path: `/s/${key}/v1/messages`, headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: JSON.stringify({ model: 'Qwen/Qwen3-8B', messages: [{ role: 'user', content: 'hello' }], max_tokens: 32, stream }) };
    const load = new LoadClient();
    const r = await load.run<{ okPerSec: number; errors: number; errorSamples: string[] }>({ target: rg.url, requests: keys.map(body), stream, dialect, mode: 'closed', concurrency: 32, durationMs: seconds * 1000, warmupMs: 500 });
    await load.close();
    console.log(`${dialect} ${stream ? 'stream' : 'json'}: ${r.okPerSec.toFixed(0)} ok/s, ${r.errors} errors ${r.errorSamples.join(' | ')}`);
    await rg.stop('SIGTERM');
    await engine.stop();
    const file = join(profDir, readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'))!);
    console.log(topFunctions(file, Number(process.env.TOP ?? 40)).join('\n'));
    console.log(`profile: ${file}`);
  } finally {
    await stopAll();
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('profile.ts')) main().catch(async (e) => { console.error(e); await stopAll(); process.exit(1); });
