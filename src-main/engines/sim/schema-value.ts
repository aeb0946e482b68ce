// Builds a value that validates against a JSON schema (structured output), filling "answer"-like fields
// with the policy's answer.

type Schema = Record<string, unknown>;

export function findSchemaInText(text: string): Schema | null {
  if (!/json/i.test(text)) return null;
  let from = 0;
  for (let tries = 0; tries < 50; tries++) {
    const start = text.indexOf('{', from);
    if (start < 0) return null;
    let depth = 0;
    let inStr = false;
    for (let i = start; i < text.length; i++) {
      const c = text[i];
      if (inStr) {
        if (c === '\\') i++;
        else if (c === '"') inStr = false;
      } else if (c === '"') inStr = true;
      else if (c === '{') depth++;
      else if (c === '}' && --depth === 0) {
        try {
          const v = JSON.parse(text.slice(start, i + 1)) as Schema;
          if (v && typeof v === 'object' && (v.properties || v.type === 'object')) return v;
        } catch {
          // not JSON; keep scanning
        }
        break;
      }
    }
    from = start + 1;
  }
  return null;
}

export function schemaValue(schema: Schema | undefined, answer: string | null, key = ''): unknown {
  if (!schema || typeof schema !== 'object') return answer ?? 'ok';
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  const union = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (Array.isArray(union) && union.length) return schemaValue(union.find((s) => s.type !== 'null') ?? union[0], answer, key);
  const rawType = schema.type;
  const type = String(Array.isArray(rawType) ? rawType.find((t) => t !== 'null') : rawType ?? (schema.properties ? 'object' : 'string')).toLowerCase();
  const answerish = /answer|result|value|output|solution/i.test(key);
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, s] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) out[k] = schemaValue(s, answer, k);
      return out;
    }
    case 'array': {
      const n = Math.max(1, typeof schema.minItems === 'number' ? schema.minItems : 1);
      return Array.from({ length: n }, () => schemaValue(schema.items as Schema, answer, key));
    }
    case 'integer':
    case 'number': {
      const min = typeof schema.minimum === 'number' ? schema.minimum : undefined;
      const max = typeof schema.maximum === 'number' ? schema.maximum : undefined;
      let v = answerish && answer !== null && Number.isFinite(Number(answer)) ? Number(answer) : min ?? 1;
      if (type === 'integer') v = Math.round(v);
      if (min !== undefined) v = Math.max(min, v);
      if (max !== undefined) v = Math.min(max, v);
      return v;
    }
    case 'boolean':
      return true;
    case 'null':
      return null;
    default: {
      if (answerish && answer !== null) return answer;
      if (/reason|explan|summary|descr|thought/i.test(key)) return 'Answered directly from the request.';
      return answer ?? 'ok';
    }
  }
}
