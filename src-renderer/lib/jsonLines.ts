// Pretty JSON as lines for diffing: two-space indent, keys in their original order, and arrays of
// numbers packed several per line (a served SGLang request carries thousands of input ids; one line
// per id would drown the diff). Long strings are kept on one line.

const PACK = 20;

function isPrimitive(v: unknown): boolean {
  return v === null || typeof v !== 'object';
}

export function jsonLines(value: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown, indent: string, prefix: string, suffix: string) => {
    if (isPrimitive(v)) {
      out.push(`${indent}${prefix}${JSON.stringify(v) ?? 'null'}${suffix}`);
      return;
    }
    if (Array.isArray(v)) {
      if (v.length === 0) return void out.push(`${indent}${prefix}[]${suffix}`);
      if (v.every(isPrimitive)) {
        const parts = v.map((x) => JSON.stringify(x) ?? 'null');
        const flat = parts.join(', ');
        if (flat.length <= 80) return void out.push(`${indent}${prefix}[${flat}]${suffix}`);
        out.push(`${indent}${prefix}[  // ${v.length} items`);
        for (let i = 0; i < parts.length; i += PACK) {
          const last = i + PACK >= parts.length;
          out.push(`${indent}  ${parts.slice(i, i + PACK).join(', ')}${last ? '' : ','}`);
        }
        out.push(`${indent}]${suffix}`);
        return;
      }
      out.push(`${indent}${prefix}[`);
      v.forEach((x, i) => walk(x, `${indent}  `, '', i < v.length - 1 ? ',' : ''));
      out.push(`${indent}]${suffix}`);
      return;
    }
    const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
    if (entries.length === 0) return void out.push(`${indent}${prefix}{}${suffix}`);
    out.push(`${indent}${prefix}{`);
    entries.forEach(([k, x], i) => walk(x, `${indent}  `, `${JSON.stringify(k)}: `, i < entries.length - 1 ? ',' : ''));
    out.push(`${indent}}${suffix}`);
  };
  walk(value, '', '', '');
  return out;
}
