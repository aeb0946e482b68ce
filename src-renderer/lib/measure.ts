// Text width measurement with a canvas, cached per string. Used to lay out token chips in rows
// without touching the DOM (the same font is applied to the rendered chips).

export type Measure = (text: string) => number;

export function fontOf(el: Element): string {
  const cs = getComputedStyle(el);
  return `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
}

export function createMeasure(font: string): Measure {
  const ctx = document.createElement('canvas').getContext('2d');
  const cache = new Map<string, number>();
  if (!ctx) return (t) => t.length * 7.2;
  ctx.font = font;
  return (text) => {
    let w = cache.get(text);
    if (w === undefined) {
      w = ctx.measureText(text).width;
      cache.set(text, w);
    }
    return w;
  };
}
