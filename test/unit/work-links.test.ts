import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeEscapingLinks } from '../../src-main/rollouts/runtimes/work-links.js';

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('links out of the work folder before a check', () => {
  it('removes every link that leads outside and keeps those that stay inside', () => {
    dir = mkdtempSync(join(tmpdir(), 'rollgate-links-'));
    const work = join(dir, 'work');
    mkdirSync(join(work, 'src', 'deep'), { recursive: true });
    writeFileSync(join(work, 'src', 'a.txt'), 'a');
    writeFileSync(join(dir, 'secret.txt'), 's');
    symlinkSync('/run/rollgate/tests/expected.txt', join(work, 'answer.txt'));
    symlinkSync('../secret.txt', join(work, 'up.txt'));
    symlinkSync('../../..', join(work, 'src', 'deep', 'root'));
    symlinkSync('.', join(work, 'here'));
    symlinkSync('here/..', join(work, 'sneaky')); // lexically inside, really the parent
    symlinkSync('src/a.txt', join(work, 'ok.txt'));
    symlinkSync('/work/src/a.txt', join(work, 'abs-ok.txt'));
    symlinkSync('missing', join(work, 'dangling'));
    const removed = removeEscapingLinks(work, '/work');
    expect(removed.sort()).toEqual(['answer.txt', 'sneaky', join('src', 'deep', 'root'), 'up.txt']);
    expect(readdirSync(work).sort()).toEqual(['abs-ok.txt', 'dangling', 'here', 'ok.txt', 'src']);
  });
});
