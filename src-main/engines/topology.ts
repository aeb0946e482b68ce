// Topology file (DESIGN §11): YAML list of engines, validated with clear errors, and optionally the
// `runtime` batches use by default (auto | bwrap | docker | local; checked by the commands that read it).
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { z } from 'zod';
import { FAMILY_NAMES } from '../core/families/index.js';
import { driverFor, ENGINE_KINDS } from './drivers/index.js';
import { routerConfigSchema } from './router.js';
import type { EngineConfig } from './types.js';

export const engineConfigSchema = z.object({
  id: z.string().regex(/^[A-Za-z0-9._-]+$/, 'use letters, digits, dot, dash or underscore'),
  kind: z.enum(ENGINE_KINDS),
  replicas: z.array(z.url()).min(1),
  model: z.string().min(1),
  mode: z.enum(['chat', 'token']).optional(),
  tokenizer: z.string().optional(),
  family: z.enum(FAMILY_NAMES).optional(),
  dataParallelSize: z.number().int().min(1).max(1024).optional(),
  developerRole: z.enum(['system', 'developer']).optional(),
  router: routerConfigSchema.optional(),
}).strict();

const topologySchema = z.object({ engines: z.array(engineConfigSchema).min(1), runtime: z.string().min(1).optional() }).strict();

export interface Topology { engines: EngineConfig[]; runtime?: string }

/**
 * The mode when a config names none: the driver's default (SGLang: token, its chat endpoint returns no
 * ids), but token wherever the kind has it and a tokenizer or family is named, since then Rollgate reuses
 * the sampled ids verbatim and multi-turn traces merge exactly (vLLM's chat mode templates itself, and a
 * re-render of an earlier turn is merged only when it changes whitespace alone, core/trajectory/rerender.ts).
 */
export function defaultMode(e: Pick<EngineConfig, 'kind' | 'tokenizer' | 'family'>): EngineConfig['mode'] {
  const driver = driverFor(e.kind);
  return (e.tokenizer || e.family) && driver.modes.includes('token') ? 'token' : driver.defaultMode;
}

/** One engine from the API or the store, validated like a topology entry; throws with the field named. */
export function parseEngineConfig(value: unknown, source = 'engine'): EngineConfig {
  const result = engineConfigSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new Error(`${source}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  const e = result.data;
  return { ...e, mode: e.mode ?? defaultMode(e) };
}

export function parseTopology(text: string, source = 'topology'): EngineConfig[] {
  return parseTopologyFile(text, source).engines;
}

export function parseTopologyFile(text: string, source = 'topology'): Topology {
  let doc: unknown;
  try { doc = parse(text); } catch (err) { throw new Error(`${source}: not valid YAML: ${(err as Error).message}`); }
  const result = topologySchema.safeParse(doc);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new Error(`${source}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  const ids = new Set<string>();
  const engines = result.data.engines.map((e) => {
    if (ids.has(e.id)) throw new Error(`${source}: duplicate engine id ${e.id}`);
    ids.add(e.id);
    return { ...e, mode: e.mode ?? defaultMode(e) };
  });
  return { engines, ...(result.data.runtime ? { runtime: result.data.runtime } : {}) };
}

export function loadTopology(path: string): EngineConfig[] {
  return loadTopologyFile(path).engines;
}

export function loadTopologyFile(path: string): Topology {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(code === 'ENOENT' ? `topology file not found: ${path}` : `cannot read topology file ${path}: ${(err as Error).message}`);
  }
  return parseTopologyFile(text, path);
}
