// The topology field `family` (issue 13): unknown families and tokenizers that do not match the family
// fail at load with the field named; without the field the family is read off the tokenizer.
import { describe, expect, it } from 'vitest';
import { FAMILY_NAMES, getFamily } from '../../src-main/core/families/index.js';
import { checkTokenFormat, loadTokenFormat, tokenizerSpecOf } from '../../src-main/engines/token-format.js';
import { parseTopology } from '../../src-main/engines/topology.js';
import { startTestApp } from '../helpers/app.js';

const yaml = (extra: string) => `engines:\n  - id: e\n    kind: sglang\n    replicas: [http://127.0.0.1:9]\n    model: m\n${extra}`;

describe('topology field family', () => {
  it('an unknown family fails with the field named and the known ones listed', () => {
    expect(() => parseTopology(yaml('    family: llama4\n'), 'fleet.yaml')).toThrow(/fleet\.yaml: engines\.0\.family: .*qwen3.*gpt-oss/);
  });

  it('a tokenizer that does not match the family fails at load, naming the field and the missing markers', async () => {
    const [e] = parseTopology(yaml('    family: gpt-oss\n    tokenizer: builtin:qwen3\n'));
    await expect(checkTokenFormat(e!)).rejects.toThrow(/^family: tokenizer "builtin:qwen3" does not match family "gpt-oss" \(no single token for <\|start\|>/);
    const [g] = parseTopology(yaml('    family: glm45\n    tokenizer: builtin:deepseek-v31\n'));
    await expect(checkTokenFormat(g!)).rejects.toThrow(/family: .*<\|observation\|>/);
    const [t] = parseTopology(yaml('    tokenizer: /nonexistent/model\n'));
    await expect(checkTokenFormat(t!)).rejects.toThrow(/^tokenizer: /);
  }, 30_000);

  it('createApp refuses such a topology before serving', async () => {
    const [e] = parseTopology(yaml('    family: deepseek-v31\n    tokenizer: builtin:gpt-oss\n'));
    await expect(startTestApp({ sim: false, engines: [e!] })).rejects.toThrow(/engine e: family: tokenizer "builtin:gpt-oss" does not match family "deepseek-v31"/);
  }, 30_000);

  it('GET /api/engine-kinds lists the drivers\' kinds and modes, the families and the builtin tokenizers', async () => {
    const app = await startTestApp({ sim: false });
    try {
      const r = await app.api('/api/engine-kinds');
      expect(r.kinds).toEqual([
        { kind: 'vllm', label: 'vLLM', modes: ['chat', 'token'], defaultMode: 'chat' },
        { kind: 'sglang', label: 'SGLang', modes: ['token'], defaultMode: 'token' },
      ]);
      expect(r.families.map((f: { name: string }) => f.name)).toEqual(FAMILY_NAMES);
      expect(r.tokenizers.map((t: { spec: string }) => t.spec)).toContain('builtin:gpt-oss');
    } finally {
      await app.stop();
    }
  }, 30_000);

  it('without the field, the family is detected from the tokenizer (else qwen3); with it, the tokenizer defaults to the family\'s', async () => {
    for (const name of FAMILY_NAMES) {
      const spec = getFamily(name).defaultTokenizer;
      expect(tokenizerSpecOf({ family: name })).toBe(spec);
      expect((await loadTokenFormat({ tokenizer: spec })).family.name, spec).toBe(name);
    }
    expect(tokenizerSpecOf({})).toBe('builtin:qwen3');
    const [e] = parseTopology(yaml('    family: qwen3-coder\n'));
    expect(e).toMatchObject({ family: 'qwen3-coder', mode: 'token' });
  }, 60_000);
});
