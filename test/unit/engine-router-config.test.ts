// Topology `router:` (issue 15 part 4): validated with clear errors; each router kind's session header.
import { describe, expect, it } from 'vitest';
import { explainCaptureBehindRouter, routingHeaders } from '../../src-main/engines/router.js';
import { parseEngineConfig, parseTopology } from '../../src-main/engines/topology.js';
import { CaptureError } from '../../src-main/engines/types.js';

function topology(router: string): string {
  return `engines:\n  - id: fleet\n    kind: vllm\n    replicas: [http://127.0.0.1:8001]\n    model: Qwen/Qwen3-8B\n    router: ${router}\n`;
}

describe('router config', () => {
  it('takes each router kind, with its own session header unless one is named', () => {
    const [vllm] = parseTopology(topology('{kind: vllm-router}'));
    expect(vllm!.router).toEqual({ kind: 'vllm-router' });
    expect(routingHeaders(vllm!.router, 's1')).toEqual({ 'x-user-id': 's1' });
    const [sglang] = parseTopology(topology('{kind: sglang-router}'));
    expect(routingHeaders(sglang!.router, 's1')).toEqual({ 'x-smg-routing-key': 's1' });
    // DESIGN §11's example names the SGLang router by its newer name.
    const [gateway] = parseTopology(topology('{kind: sglang-gateway, header: X-SMG-Routing-Key}'));
    expect(routingHeaders(gateway!.router, 's1')).toEqual({ 'x-smg-routing-key': 's1' });
    const [custom] = parseTopology(topology('{kind: vllm-router, header: X-Rollout-Session}'));
    expect(routingHeaders(custom!.router, 's1')).toEqual({ 'x-rollout-session': 's1' });
    expect(routingHeaders(undefined, 's1')).toBeUndefined();
  });

  it('refuses a bad router with the field named', () => {
    expect(() => parseTopology(topology('{kind: nginx}'))).toThrow(/^topology: engines\.0\.router\.kind: router kind must be one of vllm-router, sglang-router, sglang-gateway$/);
    expect(() => parseTopology(topology('{header: x-user-id}'))).toThrow(/engines\.0\.router\.kind: router kind must be one of/);
    expect(() => parseTopology(topology('{kind: vllm-router, header: "x user"}'))).toThrow(/engines\.0\.router\.header: router header must be an HTTP header name/);
    expect(() => parseTopology(topology('{kind: sglang-router, header: Authorization}'))).toThrow(/engines\.0\.router\.header: router header Authorization is reserved/);
    expect(() => parseTopology(topology('{kind: vllm-router, header: x-api-key}'))).toThrow(/router header x-api-key is reserved/);
    expect(() => parseTopology(topology('{kind: vllm-router, policy: session}'))).toThrow(/engines\.0\.router: Unrecognized key: "policy"/);
    expect(() => parseTopology(topology('vllm-router'))).toThrow(/engines\.0\.router: /);
    expect(() => parseEngineConfig({ id: 'e', kind: 'sglang', replicas: ['http://127.0.0.1:1'], model: 'm', router: { kind: 'sglang-router', header: '' } }, 'POST /api/engines'))
      .toThrow(/^POST \/api\/engines: router\.header: router header must be an HTTP header name/);
  });

  it('a capture failure behind a router names the engine, the router, the dropped field and what to check', () => {
    const err = explainCaptureBehindRouter('fleet', { kind: 'sglang-router' }, new CaptureError('no ids', 'missing-ids', 'output_ids'));
    expect(err).toBeInstanceOf(CaptureError);
    expect(err).toMatchObject({ reason: 'missing-ids', field: 'output_ids', status: 502 });
    expect(err.message).toMatch(/^engine fleet is behind a sglang-router \(SGLang model gateway\) that dropped `output_ids` from the engine's answer; .*HTTP workers/);
    const unnamed = explainCaptureBehindRouter('fleet', { kind: 'vllm-router' }, new CaptureError('engine reported 3 output ids but 2 logprobs', 'logprob-count'));
    expect(unnamed.message).toMatch(/vllm-router \(vLLM production-stack router\) that did not pass the engine's token ids through \(engine reported 3 output ids but 2 logprobs\).*vLLM >= 0\.10\.2/);
  });
});
