import { describe, expect, it } from 'vitest';
import { DeltaBases } from '../../src-main/store/delta-bases.js';
import { DeltaBase } from '../../src-main/store/json-columns.js';

const entry = (id: string, seq: number, prompt: number[], output: number[]) => ({
  id, seq, promptIds: Int32Array.from(prompt), outputIds: Int32Array.from(output),
  received: new DeltaBase({ messages: [] }), served: new DeltaBase({ messages: [] }),
});

describe('DeltaBases', () => {
  it('forgets an ended session: no candidate parent is left for it', () => {
    const bases = new DeltaBases();
    bases.add('s1', entry('c1', 0, [1, 2], [3]));
    bases.add('s2', entry('c2', 0, [7], [8]));
    expect(bases.choose('s1', Int32Array.from([1, 2, 3, 4]))?.entry.id).toBe('c1');
    bases.forget('s1');
    expect(bases.has('s1')).toBe(false);
    expect(bases.choose('s1', Int32Array.from([1, 2, 3, 4]))).toBeNull();
    expect(bases.choose('s2', Int32Array.from([7, 8, 9]))?.entry.id).toBe('c2');
  });
});
