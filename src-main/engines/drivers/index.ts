// The engine-kind registry: one table, one driver per kind (vLLM's parser registries are the model).
import { sglangDriver } from './sglang/index.js';
import type { EngineDriver } from './types.js';
import { vllmDriver } from './vllm/index.js';

export type { EngineDriver } from './types.js';

const DRIVERS = { vllm: vllmDriver, sglang: sglangDriver } as const satisfies Record<string, EngineDriver>;

export type EngineKind = keyof typeof DRIVERS;
export const ENGINE_KINDS = Object.keys(DRIVERS) as [EngineKind, ...EngineKind[]];

export function driverFor(kind: string): EngineDriver {
  const d = (DRIVERS as Record<string, EngineDriver>)[kind];
  if (!d) throw new Error(`unknown engine kind "${kind}" (known: ${ENGINE_KINDS.join(', ')})`);
  return d;
}

/** What the UI and API show about each kind. */
export function listEngineKinds(): Array<{ kind: string; label: string; modes: readonly string[]; defaultMode: string }> {
  return Object.values(DRIVERS).map((d) => ({ kind: d.kind, label: d.label, modes: d.modes, defaultMode: d.defaultMode }));
}
