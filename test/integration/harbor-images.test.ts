// Task images through the Engine API on a real dockerd: built once per environment content, reused by a
// later builder (a later batch), a broken Dockerfile fails with the daemon's own words.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromImages, ImageBuilder, ImageError } from '../../src-main/rollouts/images/builder.js';
import { ensureBaseImage } from '../helpers/base-image.js';

const EXAMPLE_ENV = resolve(import.meta.dirname, '..', '..', 'assets', 'tasks', 'fix-greeting', 'environment');
const docker = new Docker();
let dir: string;
const tags: string[] = [];

beforeAll(async () => {
  await ensureBaseImage(docker);
  dir = mkdtempSync(join(tmpdir(), 'rollgate-img-'));
});

afterAll(async () => {
  for (const t of tags) await docker.getImage(t).remove({ force: true }).catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

describe('ImageBuilder', () => {
  it('builds an environment once; a second builder (the next batch) builds nothing', async () => {
    // A private copy with a unique file, so the first build really builds whatever ran before.
    const ctx = join(dir, 'env');
    cpSync(EXAMPLE_ENV, ctx, { recursive: true });
    writeFileSync(join(ctx, 'nonce.txt'), `${process.pid}-${Date.now()}`);
    const first = new ImageBuilder(docker);
    const tag = await first.tagFor(ctx);
    tags.push(tag);
    const phases: string[] = [];
    // Samples of one task ask at once: one build.
    const [a, b] = await Promise.all([
      first.ensureBuilt(ctx, { network: 'none', onProgress: (p) => phases.push(p.phase) }),
      first.ensureBuilt(ctx, { network: 'none' }),
    ]);
    expect(a).toEqual(b);
    expect(a.cached).toBe(false);
    expect(a.image).toBe(tag);
    expect(a.workdir).toBe('/app');
    expect(first.stats).toEqual({ built: 1, pulled: 0, cached: 0 });
    expect(phases).toContain('build');

    const second = new ImageBuilder(docker);
    const again = await second.ensureBuilt(ctx, { network: 'none' });
    expect(again).toMatchObject({ image: a.image, cached: true });
    expect(second.stats).toEqual({ built: 0, pulled: 0, cached: 1 });
  });

  it('the tag follows the FROM image: the same files on another base are another image', async () => {
    expect(fromImages('FROM a:1 AS build\nRUN x\nFROM --platform=linux/amd64 build\nFROM scratch\nfrom b')).toEqual(['a:1', 'b']);
    const builder = new ImageBuilder(docker);
    const ctx = join(dir, 'rebased');
    cpSync(EXAMPLE_ENV, ctx, { recursive: true });
    const onDebian = await builder.tagFor(ctx);
    writeFileSync(join(ctx, 'Dockerfile'), readFileSync(join(ctx, 'Dockerfile'), 'utf8').replace('debian:bookworm-slim', 'rollgate-not-pulled:1'));
    const elsewhere = await builder.tagFor(ctx);
    writeFileSync(join(ctx, 'Dockerfile'), readFileSync(join(EXAMPLE_ENV, 'Dockerfile'), 'utf8'));
    expect(await builder.tagFor(ctx)).toBe(onDebian);
    expect(elsewhere).not.toBe(onDebian);
  });

  it('a Dockerfile that fails to build gives an ImageError with the failing step', async () => {
    const ctx = join(dir, 'broken');
    cpSync(EXAMPLE_ENV, ctx, { recursive: true });
    writeFileSync(join(ctx, 'Dockerfile'), 'FROM debian:bookworm-slim\nRUN echo building && exit 3\n');
    const builder = new ImageBuilder(docker);
    tags.push(await builder.tagFor(ctx));
    const err = await builder.ensureBuilt(ctx, { network: 'none' }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(ImageError);
    expect((err as Error).message).toMatch(/docker build failed: .*returned a non-zero code: 3/);
    expect((err as ImageError).log).toMatch(/building/);
  });

  it('a missing prebuilt image that cannot be pulled is a clear error', async () => {
    const err = await new ImageBuilder(docker).ensurePresent('rollgate-no-such-image:never', { timeoutMs: 60_000 }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(ImageError);
    expect((err as Error).message).toMatch(/rollgate-no-such-image:never/);
  });
});
