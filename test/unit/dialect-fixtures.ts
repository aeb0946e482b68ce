// Shared by the dialect codec tests: the captured agent requests and a tiny SSE parser.

export { HARNESS_DIR } from '../helpers/paths.js';
import { capturedRequests, type CapturedRequest } from '../helpers/captures.js';

export type Capture = CapturedRequest;

/** Every captured request whose file name the predicate accepts (e.g. ends with `-anthropic.json`). */
export function loadCaptures(match: (fileName: string) => boolean): Capture[] {
  return capturedRequests(match);
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
