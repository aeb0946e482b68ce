// Model-family output parsers (issue 13). Fixtures: raw model outputs and the calls vLLM's own parsers
// extract from them (test/fixtures/families, facts from vLLM's parser tests). Properties (fast-check): a
// turn with tool calls rendered in the family's format parses back to the same calls, reasoning and
// content, however the text is cut into chunks.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FAMILY_NAMES, getFamily, type ModelFamily, type PromptView, type SampledTurn } from '../../src-main/core/families/index.js';
import { collectQwen3Deltas } from '../../src-main/core/families/qwen3/output-parser.js';
import type { CanonicalDelta, FunctionTool } from '../../src-main/core/types.js';

interface FixtureCall { name: string; arguments?: Record<string, unknown>; rawArguments?: string }
interface Fixture {
  source: string;
  tools: FunctionTool[];
  cases: Array<{ name: string; output: string; tools?: FunctionTool[]; reasoning?: string | null; content: string | null; toolCalls: FixtureCall[] }>;
}

const fixture = (family: string): Fixture => JSON.parse(readFileSync(new URL(`../fixtures/families/${family}.json`, import.meta.url), 'utf8'));

function parse(family: ModelFamily, chunks: string[], tools: readonly FunctionTool[] = [], promptTail?: string) {
  const p = family.createParser({ tools, promptTail, newToolCallId: (i) => `call_${i}` });
  const deltas: CanonicalDelta[] = [];
  for (const c of chunks) deltas.push(...p.push(c));
  deltas.push(...p.end());
  return collectQwen3Deltas(deltas);
}

/** The text cut at the given positions (sorted, deduplicated). */
function cut(text: string, at: number[]): string[] {
  const points = [...new Set(at.map((x) => x % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const p of points) { out.push(text.slice(from, p)); from = p; }
  out.push(text.slice(from));
  return out;
}

describe('family parsers against vLLM parser facts', () => {
  for (const name of FAMILY_NAMES) {
    const fx = fixture(name);
    for (const c of fx.cases) {
      it(`${name}: ${c.name}`, () => {
        const family = getFamily(name);
        const whole = parse(family, [c.output], c.tools ?? fx.tools);
        expect(whole.content).toBe(c.content);
        if (c.reasoning !== undefined) expect(whole.reasoning).toBe(c.reasoning);
        expect(whole.toolCalls.map((t) => t.name)).toEqual(c.toolCalls.map((t) => t.name));
        whole.toolCalls.forEach((t, i) => {
          const want = c.toolCalls[i]!;
          if (want.rawArguments !== undefined) expect(t.arguments).toBe(want.rawArguments);
          else expect(JSON.parse(t.arguments)).toEqual(want.arguments);
        });
        // One character at a time: the same result.
        expect(parse(family, [...c.output], c.tools ?? fx.tools)).toEqual(whole);
      });
    }
  }
});

const TOOLS: FunctionTool[] = [
  { type: 'function', function: { name: 'run_shell', description: 'Run a command', parameters: { type: 'object', properties: { command: { type: 'string' }, timeout: { type: 'integer' }, background: { type: 'boolean' } }, required: ['command'] } } },
  { type: 'function', function: { name: 'edit_file', description: 'Edit', parameters: { type: 'object', properties: { path: { type: 'string' }, edits: { type: 'array', items: { type: 'object' } }, options: { type: 'object' } }, required: ['path'] } } },
];

// Text a model writes inside markup: no angle brackets (they would open tags in any of these formats),
// and parameter text that does not begin or end with a newline (the XML formats trim one there).
const text = fc.string({ unit: fc.constantFrom(...'abc xyz_-.,:;!?é漢\n0123456789"\'{}[]'.split('')), minLength: 1, maxLength: 30 })
  .filter((s) => s.trim().length > 0 && !s.startsWith('\n') && !s.endsWith('\n'));
const args = fc.oneof(
  fc.record({ command: text, timeout: fc.integer({ min: 0, max: 10_000 }), background: fc.boolean() }, { requiredKeys: ['command'] }).map((a) => ({ name: 'run_shell', arguments: a })),
  fc.record({ path: text, edits: fc.array(fc.record({ old: text, new: text }), { maxLength: 2 }), options: fc.record({ dry: fc.boolean() }) }, { requiredKeys: ['path'] }).map((a) => ({ name: 'edit_file', arguments: a })),
);
const turn = fc.record({
  reasoning: fc.option(text, { nil: undefined }),
  content: fc.option(text, { nil: undefined }),
  toolCalls: fc.array(args, { minLength: 1, maxLength: 3 }),
});
const cuts = fc.array(fc.nat(), { maxLength: 12 });

/** What a family's prompt looks like when it opens a thinking turn (the reasoning's starting point). */
const VIEW: Record<string, { view: PromptView; tail: string }> = {
  'qwen3': { view: { turns: [], tools: [], generation: 'free', preamble: '' }, tail: '<|im_start|>assistant\n' },
  'qwen3-coder': { view: { turns: [], tools: [], generation: 'free', preamble: '' }, tail: '<|im_start|>assistant\n' },
  'gpt-oss': { view: { turns: [], tools: [], generation: 'free', preamble: '' }, tail: '<|start|>assistant' },
  'glm45': { view: { turns: [], tools: [], generation: 'free', preamble: '' }, tail: '<|assistant|>' },
  'deepseek-v31': { view: { turns: [], tools: [], generation: 'in-think', preamble: '' }, tail: '<｜Assistant｜><think>' },
};

describe('render a turn with tool calls → parse it back, under every chunking', () => {
  for (const name of FAMILY_NAMES) {
    it(name, () => {
      const family = getFamily(name);
      const { view, tail } = VIEW[name]!;
      fc.assert(fc.property(turn, cuts, (t: SampledTurn, at) => {
        const { text: out } = family.formatTurn(t, view);
        const whole = parse(family, [out], TOOLS, tail);
        expect(parse(family, cut(out, at), TOOLS, tail)).toEqual(whole);
        expect(whole.toolCalls.map((c) => ({ name: c.name, arguments: JSON.parse(c.arguments) }))).toEqual(t.toolCalls);
        if (whole.reasoning !== null) expect(whole.reasoning.trim()).toBe(t.reasoning?.trim());
      }), { numRuns: 150 });
    });
  }
});
