// Option parsers and process plumbing shared by the CLI commands.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { InvalidArgumentError } from 'commander';
import { FAMILY_NAMES } from '../core/families/index.js';
import { RUNTIME_CHOICES, type RuntimeChoice } from '../rollouts/runtimes/types.js';

/**
 * A path the user typed, made absolute against the folder they typed it in: `npm run` starts scripts
 * in the package root and leaves the caller's folder in INIT_CWD.
 */
export function userPath(p: string, env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.INIT_CWD ?? process.cwd(), p);
}

/** A file the user named that must exist: absolute (see userPath), or a one-line error naming the option. */
export function existingFile(option: string) {
  return (v: string): string => {
    const p = userPath(v);
    if (!existsSync(p)) throw new InvalidArgumentError(`no such file: ${p}`);
    return p;
  };
}

export function int(name: string) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`${name} must be a non-negative integer`);
    return n;
  };
}

export function positive(name: string) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`${name} must be a positive number`);
    return n;
  };
}

export function fraction(v: string): number {
  const n = Number(v);
  if (!(n >= 0 && n <= 1)) throw new InvalidArgumentError('must be between 0 and 1');
  return n;
}

/** Closes cleanly on the first SIGINT/SIGTERM, exits at once on the second. */
export function onSignals(close: () => Promise<void>): void {
  let closing = false;
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      if (closing) process.exit(1);
      closing = true;
      close().finally(() => process.exit(0));
    });
  }
}

export function runtimeChoice(v: string): RuntimeChoice {
  if (!(RUNTIME_CHOICES as readonly string[]).includes(v)) throw new InvalidArgumentError(`runtime must be one of ${RUNTIME_CHOICES.join(', ')}`);
  return v as RuntimeChoice;
}

/** The batches' default runtime: the command line's, else the topology file's `runtime:` (checked here). */
export function defaultRuntime(fromFlag: RuntimeChoice | undefined, topology: { runtime?: string } | null, source = 'topology'): RuntimeChoice | undefined {
  if (fromFlag || !topology?.runtime) return fromFlag;
  try {
    return runtimeChoice(topology.runtime);
  } catch (e) {
    throw new Error(`${source}: runtime: ${(e as Error).message}`);
  }
}

/** A model family name from the registry, or a usage error listing them. */
export function familyOption(v: string): string {
  if (!FAMILY_NAMES.includes(v)) throw new InvalidArgumentError(`family must be one of ${FAMILY_NAMES.join(', ')}`);
  return v;
}
