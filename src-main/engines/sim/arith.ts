// Finds and evaluates the arithmetic in a task ("What is 12 * (3 + 4)?", "add 5 and 7").

const WORDS: Array<[RegExp, string]> = [
  [/\bplus\b/gi, '+'], [/\bminus\b/gi, '-'], [/\b(times|multiplied by)\b/gi, '*'],
  [/\bdivided by\b/gi, '/'], [/\bto the power of\b/gi, '^'], [/[×x](?=\s*\d)/g, '*'], [/÷/g, '/'],
];

/** The longest arithmetic expression in the text with at least one operator, normalised. */
export function findExpression(text: string): string | null {
  let t = text;
  for (const [re, op] of WORDS) t = t.replace(re, op);
  const sum = /\b(?:sum of|add)\s+(-?\d+(?:\.\d+)?)\s+(?:and|to|\+)\s+(-?\d+(?:\.\d+)?)/i.exec(t);
  if (sum) return `${sum[1]} + ${sum[2]}`;
  const prod = /\bproduct of\s+(-?\d+(?:\.\d+)?)\s+and\s+(-?\d+(?:\.\d+)?)/i.exec(t);
  if (prod) return `${prod[1]} * ${prod[2]}`;
  const re = /[(\d][\d\s.()+\-*/^%]*[\d)]/g;
  let best: string | null = null;
  for (const m of t.matchAll(re)) {
    const e = m[0].trim();
    if (!/\d\s*(\*\*|[-+*/^%])\s*[(\d-]/.test(e)) continue;
    if (evaluate(e) === null) continue;
    if (!best || e.length > best.length) best = e;
  }
  return best;
}

/** Recursive-descent evaluation of + - * / % ^ ** and parentheses; null when it does not parse. */
export function evaluate(expr: string): number | null {
  const src = expr.replace(/\*\*/g, '^').replace(/\s+/g, '');
  let i = 0;
  const peek = () => src[i];
  const num = (): number | null => {
    if (peek() === '(') {
      i++;
      const v = add();
      if (v === null || peek() !== ')') return null;
      i++;
      return v;
    }
    if (peek() === '-') {
      i++;
      const v = num();
      return v === null ? null : -v;
    }
    const m = /^\d+(\.\d+)?/.exec(src.slice(i));
    if (!m) return null;
    i += m[0].length;
    return Number(m[0]);
  };
  const pow = (): number | null => {
    const b = num();
    if (b === null) return null;
    if (peek() === '^') {
      i++;
      const e = pow();
      return e === null ? null : b ** e;
    }
    return b;
  };
  const mul = (): number | null => {
    let v = pow();
    while (v !== null && (peek() === '*' || peek() === '/' || peek() === '%')) {
      const op = src[i++];
      const r = pow();
      if (r === null) return null;
      v = op === '*' ? v * r : op === '/' ? v / r : v % r;
    }
    return v;
  };
  const add = (): number | null => {
    let v = mul();
    while (v !== null && (peek() === '+' || peek() === '-')) {
      const op = src[i++];
      const r = mul();
      if (r === null) return null;
      v = op === '+' ? v + r : v - r;
    }
    return v;
  };
  const v = add();
  return v !== null && i === src.length && Number.isFinite(v) ? v : null;
}

export function formatNumber(v: number): string {
  if (Number.isInteger(v)) return String(v);
  return String(Math.round(v * 1e6) / 1e6);
}
