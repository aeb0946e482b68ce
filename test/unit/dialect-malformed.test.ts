// Property tests: whatever an agent sends, the codecs answer with a result or a DialectError (4xx),
// never another exception.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { anthropicCodec } from '../../src-main/core/dialects/anthropic.js';
import { DialectError, type DialectCodec } from '../../src-main/core/dialects/codec.js';
import { geminiCodec } from '../../src-main/core/dialects/gemini.js';
import { responsesCodec } from '../../src-main/core/dialects/responses.js';
import { loadCaptures } from './dialect-fixtures.js';

function onlyDialectErrors(codec: DialectCodec<any>, body: unknown): void {
  try {
    const { canonical, context } = codec.parseRequest(body, { urlModel: 'm', urlStream: true });
    expect(Array.isArray(canonical.messages)).toBe(true);
    // the encoders accept any parsed context
    codec.encodeResponse({ id: 'x', model: 'm', created: 0, message: { role: 'assistant', content: 'a', reasoning: 'r', tool_calls: [{ id: 'c', type: 'function', function: { name: canonical.tools?.[0]?.function.name ?? 'f', arguments: '{' } }] }, finish_reason: 'stop', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }, context);
  } catch (e) {
    if (!(e instanceof DialectError)) throw e;
    expect(e.status).toBeGreaterThanOrEqual(400);
    expect(e.status).toBeLessThan(500);
    expect(e.message.length).toBeGreaterThan(0);
  }
}

/** Replaces the value at one random path of `body` with `value`. */
function mutate(body: unknown, pick: number, value: unknown): unknown {
  const copy = structuredClone(body);
  const paths: Array<Array<string | number>> = [];
  const walk = (v: unknown, p: Array<string | number>) => {
    if (p.length) paths.push(p);
    if (paths.length > 5000) return;
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...p, i]));
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, [...p, k]);
  };
  walk(copy, []);
  if (!paths.length) return value;
  const path = paths[pick % paths.length];
  let cur = copy as any;
  for (const k of path.slice(0, -1)) cur = cur[k];
  cur[path.at(-1)!] = value;
  return copy;
}

const cases: Array<[string, DialectCodec<any>, (f: string) => boolean]> = [
  ['anthropic', anthropicCodec, (f) => f.endsWith('-anthropic.json')],
  ['responses', responsesCodec, (f) => f.endsWith('-responses.json')],
  ['gemini', geminiCodec, (f) => /-gemini-\w+\.json$/.test(f)],
];

for (const [name, codec, match] of cases) {
  describe(`${name} codec on malformed input`, () => {
    const bodies = loadCaptures(match).map((c) => c.body);

    it('random JSON values', () => {
      fc.assert(fc.property(fc.jsonValue(), (v) => onlyDialectErrors(codec, v)), { numRuns: 300 });
    });

    it('captured requests with one field replaced by random JSON', () => {
      fc.assert(
        fc.property(fc.nat(bodies.length - 1), fc.nat(), fc.jsonValue({ maxDepth: 2 }), (b, pick, value) => onlyDialectErrors(codec, mutate(bodies[b], pick, value))),
        { numRuns: 400 },
      );
    });
  });
}
