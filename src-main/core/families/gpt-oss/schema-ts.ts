// JSON schema → the TypeScript-like signature harmony shows tools as (`type f = (_: {…}) => any;`). Pure.
type Schema = Record<string, unknown>;

function typeText(s: Schema | undefined, indent: string): string {
  if (!s || typeof s !== 'object') return 'any';
  if (Array.isArray(s.enum) && s.enum.length) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  const union = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (Array.isArray(union) && union.length) return union.map((u) => typeText(u, indent)).join(' | ');
  const t = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string | undefined];
  return t.map((one) => {
    switch (one) {
      case 'string': return 'string';
      case 'integer':
      case 'number': return 'number';
      case 'boolean': return 'boolean';
      case 'null': return 'null';
      case 'array': return `${typeText(s.items as Schema | undefined, indent)}[]`;
      case 'object': return s.properties ? objectText(s, indent) : 'object';
      default: return 'any';
    }
  }).join(' | ');
}

function objectText(s: Schema, indent: string): string {
  const props = (s.properties ?? {}) as Record<string, Schema>;
  const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  const lines = ['{'];
  for (const [name, p] of Object.entries(props)) {
    if (typeof p?.description === 'string') for (const d of p.description.split('\n')) lines.push(`${indent}// ${d}`);
    const dflt = p && 'default' in p ? ` // default: ${typeof p.default === 'string' ? p.default : JSON.stringify(p.default)}` : '';
    lines.push(`${indent}${name}${required.has(name) ? '' : '?'}: ${typeText(p, indent)},${dflt}`);
  }
  lines.push('}');
  return lines.join('\n');
}

/** One tool as harmony's `namespace functions` shows it. */
export function toolSignature(name: string, description: string | undefined, parameters: Schema | undefined): string {
  const doc = description ? description.split('\n').map((d) => `// ${d}`).join('\n') + '\n' : '';
  const props = parameters?.properties as Record<string, unknown> | undefined;
  const args = props && Object.keys(props).length ? `(_: ${objectText(parameters!, '')}) => any` : '() => any';
  return `${doc}type ${name} = ${args};`;
}
