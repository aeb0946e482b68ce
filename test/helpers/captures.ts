// The agent requests captured in shared/reference/harnesses, by dialect.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { HARNESS_DIR } from './paths.js';

export interface CapturedRequest { file: string; path: string; query: Record<string, string>; headers: Record<string, string>; body: any }

/** Captures whose file name ends with `-<suffix>.json`, or that a predicate on the file name accepts. */
export function capturedRequests(fileSuffix: string | ((fileName: string) => boolean)): CapturedRequest[] {
  const match = typeof fileSuffix === 'string' ? (f: string) => f.endsWith(`-${fileSuffix}.json`) : fileSuffix;
  const out: CapturedRequest[] = [];
  for (const agent of readdirSync(HARNESS_DIR)) {
    const agentDir = join(HARNESS_DIR, agent);
    if (!statSync(agentDir).isDirectory()) continue;
    for (const run of readdirSync(agentDir)) {
      const runDir = join(agentDir, run);
      if (!statSync(runDir).isDirectory()) continue;
      for (const f of readdirSync(runDir).sort()) {
        if (!/^\d{3}-.*\.json$/.test(f) || !match(f)) continue;
        const rec = JSON.parse(readFileSync(join(runDir, f), 'utf8'));
        out.push({ file: `${agent}/${run}/${f}`, path: rec.path, query: rec.query ?? {}, headers: rec.headers ?? {}, body: rec.body });
      }
    }
  }
  return out;
}
