// Recognises the tools an agent offers by role (calculator, shell, file reader), whatever they are named,
// and builds their arguments from the tool's own JSON schema.
import type { PromptTool } from '../../core/families/index.js';

type Schema = Record<string, unknown>;

export interface ToolUse { tool: PromptTool; args: Record<string, unknown> }

function props(tool: PromptTool): Record<string, Schema> {
  return (tool.parameters.properties ?? {}) as Record<string, Schema>;
}
function required(tool: PromptTool): string[] {
  const r = tool.parameters.required;
  return Array.isArray(r) ? r.filter((x): x is string => typeof x === 'string') : [];
}
function typeOf(s: Schema | undefined): string {
  const t = s?.type;
  return String(Array.isArray(t) ? t.find((x) => x !== 'null') : t ?? '').toLowerCase();
}

/** The property to put `value` in: a preferred name, else a required string property matching `loose`. */
function pickProp(tool: PromptTool, preferred: RegExp, loose: RegExp, allowSoleRequired: boolean): string | null {
  const p = props(tool);
  const req = required(tool);
  const names = [...req, ...Object.keys(p).filter((k) => !req.includes(k))];
  const fits = (k: string) => ['string', 'array', ''].includes(typeOf(p[k]));
  return names.find((k) => preferred.test(k) && fits(k))
    ?? names.find((k) => loose.test(k) && fits(k))
    ?? (allowSoleRequired && req.length === 1 && typeOf(p[req[0]]) === 'string' ? req[0] : null);
}

/** Fills the other required properties with harmless values so the call validates. */
function fillRequired(tool: PromptTool, args: Record<string, unknown>): Record<string, unknown> {
  const p = props(tool);
  for (const k of required(tool)) {
    if (k in args) continue;
    const s = p[k];
    if (Array.isArray(s?.enum) && s.enum.length) args[k] = s.enum[0];
    else if (s && 'default' in s) args[k] = s.default;
    else {
      const t = typeOf(s);
      args[k] = t === 'boolean' ? false : t === 'integer' || t === 'number' ? (typeof s?.minimum === 'number' ? s.minimum : 1)
        : t === 'array' ? [] : t === 'object' ? {} : k.toLowerCase().includes('desc') ? 'Run the requested command' : '';
    }
  }
  return args;
}

const SHELL_NAME = /(^|_|-|\b)(bash|shell|sh|zsh|terminal|exec|execute|run|command|cmd|console)(_|-|\b|$)/i;
const SHELL_DESC = /\b(shell|bash|terminal|command line|execute (a |the )?command|run (a |the )?command)\b/i;
const CMD_PROP = /^(command|cmd|script|command_?line|shell_?command|commandLine)$/i;

/**
 * A command in the shape the property wants: a string; an argv array (Codex's `command: string[]`); or a
 * list of commands (Cline's `run_commands` takes `commands: string[]`, one shell command per item).
 */
function commandValue(prop: string, schema: Schema | undefined, command: string): unknown {
  if (typeOf(schema) !== 'array') return command;
  const items = schema?.items as Schema | undefined;
  const itemsDescribe = `${String(schema?.description ?? '')} ${String(items?.description ?? '')}`;
  const listOfCommands = /s$/i.test(prop) || /\b(list|array) of (shell )?commands\b|\beach (item|entry|element) is a (shell )?command\b/i.test(itemsDescribe);
  if (!listOfCommands) return ['bash', '-lc', command];
  if (typeOf(items) === 'object') {
    const inner = Object.keys((items?.properties ?? {}) as Record<string, Schema>).find((k) => CMD_PROP.test(k)) ?? 'command';
    return [{ [inner]: command }];
  }
  return [command];
}

export function matchShell(tools: PromptTool[], command: string): ToolUse | null {
  const cands = tools.filter((t) => SHELL_NAME.test(t.name) || SHELL_DESC.test(t.description));
  // Prefer a tool whose name is plainly a shell; "read_background_output" style helpers come last.
  cands.sort((a, b) => Number(/bash|shell|exec|terminal/i.test(b.name)) - Number(/bash|shell|exec|terminal/i.test(a.name)));
  for (const tool of cands) {
    const prop = pickProp(tool, CMD_PROP, /command|cmd|script/i, SHELL_NAME.test(tool.name));
    if (!prop) continue;
    return { tool, args: fillRequired(tool, { [prop]: commandValue(prop, props(tool)[prop], command) }) };
  }
  return null;
}

const READ_NAME = /^(read|read_?file|view|view_?file|cat|open_?file|get_?file_?contents?|file_?read)$/i;
const PATH_PROP = /^(file_?path|filePath|path|absolute_?path|filename|file_?name|file|target_?file)$/i;

export function matchReadFile(tools: PromptTool[], path: string): ToolUse | null {
  for (const tool of tools.filter((t) => READ_NAME.test(t.name) || /read.*file|file.*read/i.test(t.name))) {
    const prop = pickProp(tool, PATH_PROP, /path|file/i, true);
    if (prop) return { tool, args: fillRequired(tool, { [prop]: path }) };
  }
  return null;
}

const CALC_NAME = /calc|math|arith|evaluate|compute/i;
const EXPR_PROP = /^(expression|expr|formula|input|query|equation|question|calculation)$/i;

export function matchCalculator(tools: PromptTool[], expression: string): ToolUse | null {
  for (const tool of tools.filter((t) => CALC_NAME.test(t.name))) {
    const prop = pickProp(tool, EXPR_PROP, /expr|input|formula|equation/i, true);
    if (prop) return { tool, args: fillRequired(tool, { [prop]: expression }) };
  }
  return null;
}
