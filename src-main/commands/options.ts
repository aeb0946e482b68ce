// Option parsers and process plumbing shared by the CLI commands.
import { InvalidArgumentError } from 'commander';

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
