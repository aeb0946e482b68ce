// Talking to a running Rollgate's control API from the CLI (`--server URL`, or the server that holds the data
// folder, found in its lock's owner file).
import { DataFolderBusyError } from '../store/index.js';

export async function call<T>(base: string, path: string, token: string | undefined, init: RequestInit = {}): Promise<T> {
  const res = await fetch(`${base.replace(/\/$/, '')}${path}`, {
    ...init,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...init.headers },
  });
  const body = (await res.json().catch(() => ({}))) as T & { error?: { message?: string } };
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${body.error?.message ?? ''}`.trim());
  return body;
}

/** When starting here failed because a running Rollgate holds the data folder: that server's URL (else null). */
export function holdingServer(err: unknown): string | null {
  return err instanceof DataFolderBusyError ? err.owner?.url ?? null : null;
}
