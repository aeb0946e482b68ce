// One colour per engine, the same in every chart and legend: engines are ranked by id among the ids
// the server knows (plus any the charts meet), so sim-vllm is the same colour on every page. Pure.

/** The palette index of `engineId` among `known` (sorted, de-duplicated); unknown ids follow them. */
export function engineColorIndex(engineId: string | null | undefined, known: readonly string[], paletteSize: number): number {
  const id = engineId ?? '?';
  const ids = [...new Set([...known])].sort();
  let i = ids.indexOf(id);
  if (i < 0) {
    // Not a known engine: a stable slot from its name, after the known ones.
    let h = 0;
    for (const ch of id) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
    i = ids.length + (h % Math.max(1, paletteSize));
  }
  return i % paletteSize;
}
