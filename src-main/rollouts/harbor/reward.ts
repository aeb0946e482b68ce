// The verifier's reward (Harbor convention): /logs/verifier/reward.txt holds one number; else
// /logs/verifier/reward.json holds `{"reward": n, …other named numbers}` (or one named number, or a bare
// number). reward.txt wins when both exist, as in Harbor. `verifierDir` is the host folder that was
// mounted at /logs/verifier in a fresh container, so nothing the agent wrote can be read here.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface HarborReward {
  reward: number | null;
  /** Every named number from reward.json (or {reward} from reward.txt). */
  rewards: Record<string, number>;
  /** Why no reward could be read (the task is then scored 0 and its run marked failed). */
  error?: string;
}

const MAX_BYTES = 64 * 1024;

function read(path: string): string {
  const buf = readFileSync(path);
  return buf.subarray(0, MAX_BYTES).toString('utf8').trim();
}

export function readHarborReward(verifierDir: string): HarborReward {
  const txt = join(verifierDir, 'reward.txt');
  const json = join(verifierDir, 'reward.json');
  if (existsSync(txt)) {
    const text = read(txt);
    const n = Number(text);
    if (!text || !Number.isFinite(n)) return { reward: null, rewards: {}, error: `reward.txt does not hold a number: ${JSON.stringify(text.slice(0, 200))}` };
    return { reward: n, rewards: { reward: n } };
  }
  if (existsSync(json)) {
    let value: unknown;
    try {
      value = JSON.parse(read(json));
    } catch (e) {
      return { reward: null, rewards: {}, error: `reward.json is not JSON: ${(e as Error).message}` };
    }
    if (typeof value === 'number' && Number.isFinite(value)) return { reward: value, rewards: { reward: value } };
    if (!value || typeof value !== 'object' || Array.isArray(value)) return { reward: null, rewards: {}, error: 'reward.json must be an object of named numbers' };
    const rewards: Record<string, number> = {};
    for (const [k, v] of Object.entries(value)) {
      if (typeof v === 'number' && Number.isFinite(v)) rewards[k] = v;
      else if (typeof v === 'boolean') rewards[k] = v ? 1 : 0;
    }
    const names = Object.keys(rewards);
    if ('reward' in rewards) return { reward: rewards.reward, rewards };
    if (names.length === 1) return { reward: rewards[names[0]], rewards };
    return { reward: null, rewards, error: names.length ? `reward.json has several values (${names.join(', ')}) and no "reward"` : 'reward.json holds no number' };
  }
  return { reward: null, rewards: {}, error: 'the verifier wrote no reward (neither /logs/verifier/reward.txt nor reward.json)' };
}
