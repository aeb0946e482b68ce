// What each chain-break reason means (DESIGN §6), for tooltips and the divergence view.
export const BREAK_HELP: Record<string, string> = {
  'prompt-diverged': 'the next prompt re-rendered the last output / end of turn differently (often: its reasoning was dropped)',
  'rewritten-history': 'the next prompt changed an earlier turn (e.g. stripped reasoning, edited a message)',
  compaction: 'the next prompt is a shortened history',
  aborted: 'the last attempt was aborted and nothing continued it',
  error: 'the last attempt failed and nothing continued it',
  'policy-changed': 'split on a policy version change',
  'proof-failed': "a turn's prompt did not equal the concatenation so far",
};
