// The sim's "model": a deterministic, seeded policy that reads the rendered prompt the way the model
// would (through its family's prompt reader) and writes that family's output text (reasoning, tool calls,
// final answer) with the token it stops on. Pure.
import { getFamily, type ModelFamily, type PromptTurn, type PromptView, type SampledTurn } from '../../core/families/index.js';
import { formatNumber } from './arith.js';
import { readIntent, taskText, type Intent } from './intent.js';
import { unit } from './rng.js';
import { findSchemaInText, schemaValue } from './schema-value.js';
import { matchCalculator, matchReadFile, matchShell, type ToolUse } from './tool-match.js';

export interface PolicyInput {
  /** The prompt exactly as the model sees it (decoded prompt ids, special tokens kept). */
  promptText: string;
  /** Engine seed. */
  seed: number;
  /** Sampling variety: the request seed, or a per-request counter; choice index mixed in for n>1. */
  variant: number;
  /** 0..1: probability of getting the answer right. */
  skill: number;
  /** Structured output requested outside the prompt (response_format / json_schema); `true` = any JSON object. */
  jsonSchema?: Record<string, unknown> | true;
  /** OpenAI tool_choice when known (chat routes). */
  toolChoice?: unknown;
  /** The model family whose prompts it reads and whose output it writes. Default qwen3. */
  family?: ModelFamily;
}

export interface PolicyDecision {
  text: string;
  /** The token text the model stops on (null: raw completion, the tokenizer's EOS). */
  end: string | null;
  kind: 'greeting' | 'tool_call' | 'answer_from_tool' | 'direct' | 'json' | 'raw';
}

const GREETINGS = ['Hello! How can I help you today?', 'Hi there! What can I do for you?', 'Hey! How can I help?'];
const FROM_TOOL = ['I ran the tool and checked its output.', 'The tool returned a result.', 'Here is what the tool reported.'];

function pick<T>(list: T[], ...key: Array<number | string>): T {
  return list[Math.floor(unit('pick', ...key) * list.length)];
}

/** A slightly wrong version of a value, for the (1 - skill) share of samples. */
function perturb(value: string, ...key: Array<number | string>): string {
  const n = Number(value);
  if (value !== '' && Number.isFinite(n)) return formatNumber(n + (unit('delta', ...key) < 0.5 ? -1 : 1));
  return value.length > 1 ? value.slice(0, -1) : `${value}x`;
}

function lastNonSystem(turns: PromptTurn[]): PromptTurn | undefined {
  for (let i = turns.length - 1; i >= 0; i--) if (turns[i].role !== 'system') return turns[i];
  return undefined;
}

function lastTask(turns: PromptTurn[]): string {
  for (let i = turns.length - 1; i >= 0; i--) {
    if (turns[i].role === 'user') return taskText(turns[i].content);
  }
  return '';
}

/** The tool results the model is answering from: the `tool` turns that end the prompt. */
function trailingToolResults(turns: PromptTurn[]): string[] | null {
  const out: string[] = [];
  for (let i = turns.length - 1; i >= 0 && turns[i].role !== 'user' && turns[i].role !== 'assistant'; i--) {
    if (turns[i].role === 'tool') out.unshift(turns[i].content);
  }
  return out.length ? out : null;
}

/**
 * Unwraps agent framing of a tool result: an "Output:" section (Codex puts it last on its own lines,
 * Qwen Code inline between "Directory:" and "Error:"), JSON envelopes and lists of them.
 */
function toolOutputText(raw: string): string {
  let t = raw;
  const out = /(?:^|\n)Output:[ \t]*\n?([\s\S]*?)(?=\n[A-Z][A-Za-z ]{1,30}:(?: |\n|$)|$)/.exec(t);
  if (out) t = out[1];
  try {
    const parsed = JSON.parse(t) as unknown;
    // A list of per-command results (Cline's run_commands: [{query, result, success}]): the last one counts.
    const v = Array.isArray(parsed) && parsed.length ? parsed[parsed.length - 1] : parsed;
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      for (const k of ['output', 'stdout', 'result', 'content', 'llmContent', 'text']) {
        if (typeof o[k] === 'string') return o[k] as string;
      }
    } else if (typeof v === 'string' || typeof v === 'number') return String(v);
  } catch {
    // plain text result
  }
  return t;
}

function valueFromResult(result: string, intent: Intent): string {
  const text = result.trim();
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  if (intent.kind === 'shell' && /^wc -l\b/.test(intent.command) && !/^\d+$/.test(text)) {
    // The tool returned the file itself (a read tool): count its lines.
    return String(result.replace(/\n$/, '').split('\n').length);
  }
  const firstNumber = /-?\d+(?:\.\d+)?/.exec(text)?.[0];
  const wantsNumber = intent.kind === 'arithmetic' || (intent.kind === 'shell' && intent.wantsNumber);
  if (wantsNumber && firstNumber !== undefined) return firstNumber;
  if (lines.length === 1) return lines[0];
  if (firstNumber !== undefined) return firstNumber;
  return lines[0] ?? '';
}

function chooseTool(view: PromptView, intent: Intent, toolChoice: unknown): ToolUse | null {
  if (toolChoice === 'none' || !view.tools.length) return null;
  let tools = view.tools;
  const forced = toolChoice && typeof toolChoice === 'object' ? (toolChoice as { function?: { name?: string } }).function?.name : undefined;
  if (forced) tools = tools.filter((t) => t.name === forced);
  if (intent.kind === 'arithmetic') return matchCalculator(tools, intent.expression);
  if (intent.kind === 'shell') {
    const cat = /^cat (\S+)$/.exec(intent.command);
    return matchShell(tools, intent.command)
      ?? (intent.file && (cat || /^wc -l/.test(intent.command)) ? matchReadFile(tools, intent.file) : null);
  }
  return null;
}

function schemaFor(input: PolicyInput, view: PromptView): Record<string, unknown> | true | null {
  if (input.jsonSchema) return input.jsonSchema;
  for (const turn of view.turns) {
    if (turn.role === 'system' || turn.role === 'user') {
      const s = findSchemaInText(turn.content);
      if (s) return s;
    }
  }
  return null;
}

export function decide(input: PolicyInput): PolicyDecision {
  const family = input.family ?? getFamily('qwen3');
  const view = family.readPrompt(input.promptText);
  const key = [input.seed, input.variant] as const;
  const wrong = unit('skill', input.seed, input.variant, input.promptText) < 1 - input.skill;

  if (view.generation === 'none') {
    const intent = readIntent(view.preamble.replace(/=\s*$/, ''));
    if (intent.kind === 'arithmetic') {
      const v = formatNumber(intent.value);
      const shown = wrong ? perturb(v, ...key) : v;
      return { kind: 'raw', text: `${shown}\n\nThe answer is ${shown}.`, end: null };
    }
    return { kind: 'raw', text: ' and that is all.\n\n', end: null };
  }

  const task = lastTask(view.turns);
  const intent = readIntent(task);
  const results = lastNonSystem(view.turns)?.role === 'tool' ? trailingToolResults(view.turns) : null;
  const schema = schemaFor(input, view);

  let think: string;
  let body = '';
  let kind: PolicyDecision['kind'];
  const use = results ? null : chooseTool(view, intent, input.toolChoice);

  if (results) {
    let value = valueFromResult(toolOutputText(results[results.length - 1]), intent);
    if (wrong) value = perturb(value, ...key);
    think = `The tool returned its output. The answer is ${value}.`;
    body = schema ? JSON.stringify(schemaValue(schema === true ? undefined : schema, value)) : `${pick(FROM_TOOL, ...key)}\n\nThe answer is ${value}.`;
    kind = 'answer_from_tool';
  } else if (use) {
    const what = intent.kind === 'arithmetic' ? `compute ${intent.expression}` : `run \`${(intent as { command: string }).command}\``;
    think = `The user wants me to ${what}. I'll use the ${use.tool.name} tool.`;
    kind = 'tool_call';
  } else if (schema) {
    const answer = intent.kind === 'arithmetic' ? formatNumber(intent.value) : null;
    const v = answer !== null && wrong ? perturb(answer, ...key) : answer;
    think = 'The user wants a JSON object that follows the schema.';
    body = JSON.stringify(schemaValue(schema === true ? undefined : schema, v));
    kind = 'json';
  } else if (intent.kind === 'arithmetic') {
    let v = formatNumber(intent.value);
    if (wrong) v = perturb(v, ...key);
    think = `I need to compute ${intent.expression}. That gives ${v}.`;
    body = `${intent.expression} = ${v}.\n\nThe answer is ${v}.`;
    kind = 'direct';
  } else if (intent.kind === 'greeting' || !task) {
    think = 'The user is greeting me. I should reply briefly.';
    body = pick(GREETINGS, ...key);
    kind = 'greeting';
  } else {
    think = 'I have no tool that helps here, so I will answer briefly.';
    body = intent.kind === 'shell'
      ? `I can't run commands here. You could run \`${intent.command}\` yourself.`
      : 'I am not sure; I would need more information to answer that.';
    kind = 'direct';
  }

  const turn: SampledTurn = use
    ? { reasoning: think, toolCalls: [{ name: use.tool.name, arguments: use.args }] }
    : { reasoning: think, content: body };
  if (view.generation === 'no-think') turn.reasoning = null;
  return { kind, ...family.formatTurn(turn, view) };
}
