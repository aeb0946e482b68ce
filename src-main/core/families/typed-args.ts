// Tool-call formats that write each parameter as bare text (Qwen3-Coder, GLM-4.5) leave the type to the
// tool's JSON schema: a string parameter keeps its text, anything else is read as JSON (what vLLM's
// qwen3_coder and glm45 parsers do), and a value that does not read stays text. Pure.
import type { FunctionTool } from '../types.js';
import { pyJsonDumps } from './py-json.js';

type Schema = Record<string, unknown>;

/** The JSON schema of one parameter of one tool, if the request declared it. */
export function paramSchema(tools: readonly FunctionTool[], toolName: string, param: string): Schema | undefined {
  const tool = tools.find((t) => t.function?.name === toolName);
  const props = (tool?.function.parameters as { properties?: Record<string, Schema> } | undefined)?.properties;
  return props?.[param];
}

function schemaTypes(schema: Schema | undefined): string[] {
  if (!schema) return [];
  const t = schema.type;
  if (Array.isArray(t)) return t.map(String);
  if (typeof t === 'string') return [t];
  const union = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  return Array.isArray(union) ? union.flatMap((s) => schemaTypes(s)) : [];
}

const STRINGISH = new Set(['string', 'str', 'text', 'varchar', 'char', 'enum']);

/** Reads one parameter's text as its schema's type. */
export function typedValue(raw: string, schema: Schema | undefined): unknown {
  const types = schemaTypes(schema);
  if (raw.trim().toLowerCase() === 'null' && (types.length === 0 || types.includes('null'))) return null;
  if (types.length === 0 ? schema !== undefined && Array.isArray(schema.enum) : types.some((t) => STRINGISH.has(t.toLowerCase()))) return raw;
  if (schema === undefined) return raw;
  const text = raw.trim();
  if (types.includes('boolean') && /^(true|false)$/i.test(text)) return text.toLowerCase() === 'true';
  try {
    return JSON.parse(text);
  } catch {
    return raw;
  }
}

/** The JSON arguments string for parsed parameters, printed like Python's json.dumps (as vLLM returns them). */
export function argumentsJson(params: Array<[string, unknown]>): string {
  return pyJsonDumps(Object.fromEntries(params));
}

/** A parameter value written as bare text: strings as they are, anything else as JSON. */
export function bareValue(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}
