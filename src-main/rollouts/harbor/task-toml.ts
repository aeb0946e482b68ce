// Harbor's task.toml (DESIGN §7), read with smol-toml. Only the settings Rollgate acts on are checked;
// like Harbor, unknown keys are ignored (task authors add their own metadata). Spellings of both schema
// generations are accepted: `memory_mb`/`storage_mb` and the older `memory = "4G"`.
import { parse, TomlError } from 'smol-toml';
import { z } from 'zod';

const seconds = z.number().positive().finite();
const stringMap = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String));

/** "4G", "512M", "2048" (MB) → megabytes. */
const memorySize = z.union([z.number().positive(), z.string().regex(/^\s*\d+(\.\d+)?\s*[KMGT]?i?B?\s*$/i, 'must be a size such as "4G" or "512M"')])
  .transform((v) => {
    if (typeof v === 'number') return v;
    const m = /^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)/i.exec(v)!;
    const scale: Record<string, number> = { '': 1, K: 1 / 1024, M: 1, G: 1024, T: 1024 * 1024 };
    return Number(m[1]) * scale[m[2].toUpperCase()];
  });

const taskTomlSchema = z.object({
  version: z.string().optional(),
  schema_version: z.string().optional(),
  task: z.object({ name: z.string().optional(), description: z.string().optional() }).loose().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  verifier: z.object({ timeout_sec: seconds.optional(), env: stringMap.optional() }).loose().optional(),
  agent: z.object({ timeout_sec: seconds.optional() }).loose().optional(),
  solution: z.object({ env: stringMap.optional() }).loose().optional(),
  environment: z.object({
    build_timeout_sec: seconds.optional(),
    docker_image: z.string().min(1).optional(),
    cpus: z.number().positive().optional(),
    memory_mb: z.number().positive().optional(),
    memory: memorySize.optional(),
    allow_internet: z.boolean().optional(),
  }).loose().optional(),
}).loose();

/** What Rollgate takes from a task.toml. Times in ms; absent settings stay undefined (callers pick defaults). */
export interface HarborSettings {
  name?: string;
  metadata: Record<string, unknown>;
  agentTimeoutMs?: number;
  verifierTimeoutMs?: number;
  verifierEnv: Record<string, string>;
  solutionEnv: Record<string, string>;
  buildTimeoutMs?: number;
  dockerImage?: string;
  cpus?: number;
  memoryMb?: number;
  /** Harbor's default is true; Rollgate runs agents without a network either way (see harbor/README.md). */
  allowInternet: boolean;
}

const ms = (s: number | undefined) => (s === undefined ? undefined : Math.round(s * 1000));

/** Parses task.toml text; throws an Error naming the line (TOML syntax) or the field (bad value). */
export function parseTaskToml(text: string): HarborSettings {
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (e) {
    if (e instanceof TomlError) throw new Error(`task.toml line ${e.line}, column ${e.column}: ${e.message.split('\n')[0]}`);
    throw e;
  }
  const r = taskTomlSchema.safeParse(raw);
  if (!r.success) {
    throw new Error(`task.toml: ${r.error.issues.map((i) => `${i.path.join('.') || 'file'}: ${i.message}`).join('; ')}`);
  }
  const t = r.data;
  const env = t.environment ?? {};
  return {
    name: t.task?.name,
    metadata: t.metadata ?? {},
    agentTimeoutMs: ms(t.agent?.timeout_sec),
    verifierTimeoutMs: ms(t.verifier?.timeout_sec),
    verifierEnv: t.verifier?.env ?? {},
    solutionEnv: t.solution?.env ?? {},
    buildTimeoutMs: ms(env.build_timeout_sec),
    dockerImage: env.docker_image,
    cpus: env.cpus,
    memoryMb: env.memory_mb ?? env.memory,
    allowInternet: env.allow_internet ?? true,
  };
}
