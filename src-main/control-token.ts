// The control token (issue 18.2): a file in the data folder, mode 0600, never an argument or an environment
// variable (both are readable by other processes: /proc/<pid>/cmdline, /proc/<pid>/environ, and children
// inherit the environment). Trainers read the file; the server reads it once at start.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const CONTROL_TOKEN_FILE = 'control-token';
export const TOKEN_ENV = 'ROLLGATE_CONTROL_TOKEN';

export function controlTokenPath(dataDir: string): string {
  return join(dataDir, CONTROL_TOKEN_FILE);
}

/** The token in `file`; refuses a file others may read. */
export function readControlToken(file: string): string {
  const st = statSync(file);
  if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) {
    throw new Error(`control token file ${file} is readable by others (mode ${(st.mode & 0o777).toString(8)}); run: chmod 600 ${file}`);
  }
  const token = readFileSync(file, 'utf8').trim();
  if (token.length < 16) throw new Error(`control token file ${file} holds no token (16 characters or more)`);
  return token;
}

/** The token in `file`, created (random 256-bit, mode 0600) when missing. */
export function ensureControlToken(file: string): { token: string; created: boolean } {
  if (existsSync(file)) return { token: readControlToken(file), created: false };
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return { token: readControlToken(file), created: true };
}

/** A token in the environment is refused rather than used: every child process would inherit it. */
export function refuseTokenInEnv(env: NodeJS.ProcessEnv = process.env): void {
  if (env[TOKEN_ENV] === undefined) return;
  throw new Error(`${TOKEN_ENV} is not read: a token in the environment is visible to every child process. `
    + `Put it in a file of mode 0600 (default <data folder>/${CONTROL_TOKEN_FILE}) and pass --control-token-file, then unset ${TOKEN_ENV}.`);
}

/** For clients (eval/session --server): an explicit file, else the data folder's, else none. */
export function clientToken(file: string | undefined, dataDir: string): string | undefined {
  refuseTokenInEnv();
  if (file) return readControlToken(file);
  const fallback = controlTokenPath(dataDir);
  return existsSync(fallback) ? readControlToken(fallback) : undefined;
}
