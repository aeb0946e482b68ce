// Shared by the dialect codec tests: the captured agent requests and a tiny SSE parser.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const HARNESS_DIR = '/work/shared/reference/harnesses';

export interface Capture { file: string; path: string; query: Record<string, string>; body: unknown }

/** Every captured request whose file name ends with `-<suffix>.json` (e.g. `anthropic`, `responses`, `gemini-generateContent`). */
export function loadCaptures(match: (fileName: string) => boolean): Capture[] {
  const out: Capture[] = [];
  for (const agent of readdirSync(HARNESS_DIR)) {
    const agentDir = join(HARNESS_DIR, agent);
    if (!statSync(agentDir).isDirectory()) continue;
    for (const run of readdirSync(agentDir)) {
      const runDir = join(agentDir, run);
      if (!statSync(runDir).isDirectory()) continue;
      for (const f of readdirSync(runDir).sort()) {
        if (!/^\d{3}-.*\.json$/.test(f) || !match(f)) continue;
        const rec = JSON.parse(readFileSync(join(runDir, f), 'utf8')) as { path: string; query?: Record<string, string>; body: unknown };
        out.push({ file: `${agent}/${run}/${f}`, path: rec.path, query: rec.query ?? {}, body: rec.body });
      }
    }
  }
  return out;
}

export interface SseEvent { event?: string; data: string; json?: any }

export function parseSse(text: string | string[]): SseEvent[] {
  const s = Array.isArray(text) ? text.join('') : text;
  const events: SseEvent[] = [];
  for (const block of s.split('\n\n')) {
    if (!block.trim()) continue;
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    const d = data.join('\n');
    let json: unknown;
    try { json = JSON.parse(d); } catch { json = undefined; }
    events.push({ ...(event ? { event } : {}), data: d, json });
  }
  return events;
}

/** A fetch that answers every call with `body` (string → SSE or JSON by `contentType`). */
export function fakeFetch(body: string, contentType: string, status = 200): typeof fetch {
  return (async () => new Response(body, { status, headers: { 'content-type': contentType } })) as typeof fetch;
}
