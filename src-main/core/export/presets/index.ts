// Export presets (issue 19): each trainer's row, mapped from the base export row (rows.ts). A preset renames
// or reshapes only the token fields its trainer reads and carries every other base field over as it is
// (sample facts, ids, metadata, and whatever the base row gains later), so one row shape feeds every trainer.
import type { SftRow, TrainRow } from '../rows.js';
import { slimeRow } from './slime.js';
import { trlSftRow } from './trl-sft.js';
import { verifiersRow } from './verifiers.js';
import { verlRow } from './verl.js';

export type PresetName = 'verl' | 'slime' | 'verifiers' | 'trl-sft';
export const PRESETS: readonly PresetName[] = ['verl', 'slime', 'verifiers', 'trl-sft'];

/** State a preset keeps across the rows of one export (e.g. slime's integer group index). */
export class PresetState {
  private readonly groups = new Map<string, number>();
  private rows = 0;

  /** Dense integers in order of first appearance; a row without a group gets its own. */
  groupIndex(groupId: string | null, sessionId: string): number {
    const key = groupId ?? `session:${sessionId}`;
    let i = this.groups.get(key);
    if (i === undefined) this.groups.set(key, (i = this.groups.size));
    return i;
  }

  nextRowIndex(): number {
    return this.rows++;
  }
}

/** SFT presets read conversations (the sft base row); the others read token rows (the train base row). */
export function presetBase(preset: PresetName): 'train' | 'sft' {
  return preset === 'trl-sft' ? 'sft' : 'train';
}

export function mapTrainRow(preset: Exclude<PresetName, 'trl-sft'>, row: TrainRow, state: PresetState): Record<string, unknown> {
  switch (preset) {
    case 'verl': return verlRow(row);
    case 'slime': return slimeRow(row, state);
    case 'verifiers': return verifiersRow(row);
  }
}

export function mapSftRow(_preset: 'trl-sft', row: SftRow): Record<string, unknown> {
  return trlSftRow(row);
}
