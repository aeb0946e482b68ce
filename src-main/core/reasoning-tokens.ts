// How many sampled tokens were reasoning: everything through the think block's closing token. A think
// block that never closed (the budget ran out mid-thought) makes the whole output reasoning. Pure.

export function countReasoningTokens(outputIds: ArrayLike<number>, thinkEndId: number | undefined, hasReasoning: boolean): number {
  if (!hasReasoning) return 0;
  if (thinkEndId !== undefined) {
    for (let i = 0; i < outputIds.length; i++) if (outputIds[i] === thinkEndId) return i + 1;
  }
  return outputIds.length;
}
