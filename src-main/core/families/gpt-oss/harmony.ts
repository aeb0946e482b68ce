// The harmony format gpt-oss is trained on, rendered in code (the model ships no Jinja template for
// Rollgate to run): system and developer headers, channels (analysis, commentary, final), tool calls as
// commentary messages `to=functions.NAME`, tool results from `functions.NAME to=assistant`. Pure.
import { contentToText } from '../../content-text.js';
import type { ChatMessage } from '../../types.js';
import type { RenderInput } from '../types.js';
import { toolSignature } from './schema-ts.js';

export const H = {
  start: '<|start|>', end: '<|end|>', message: '<|message|>', channel: '<|channel|>', constrain: '<|constrain|>',
  call: '<|call|>', ret: '<|return|>',
} as const;

const msg = (header: string, body: string, close: string = H.end) => `${H.start}${header}${H.message}${body}${close}`;

function systemMessage(kwargs: Record<string, unknown>, hasTools: boolean): string {
  const effort = typeof kwargs.reasoning_effort === 'string' ? kwargs.reasoning_effort : 'medium';
  const lines = [
    typeof kwargs.model_identity === 'string' ? kwargs.model_identity : 'You are ChatGPT, a large language model trained by OpenAI.',
    'Knowledge cutoff: 2024-06',
  ];
  // A date that changes between turns would change the prompt's first tokens, so it is opt-in.
  if (typeof kwargs.current_date === 'string') lines.push(`Current date: ${kwargs.current_date}`);
  let body = `${lines.join('\n')}\n\nReasoning: ${effort}\n\n# Valid channels: analysis, commentary, final. Channel must be included for every message.`;
  if (hasTools) body += "\nCalls to these tools must go to the commentary channel: 'functions'.";
  return msg('system', body);
}

function developerMessage(instructions: string[], input: RenderInput): string | null {
  const parts: string[] = [];
  if (instructions.length) parts.push(`# Instructions\n\n${instructions.join('\n\n')}`);
  if (input.tools?.length) {
    const sigs = input.tools.map((t) => toolSignature(t.function.name, t.function.description, t.function.parameters as Record<string, unknown> | undefined));
    parts.push(`# Tools\n\n## functions\n\nnamespace functions {\n\n${sigs.join('\n\n')}\n\n} // namespace functions`);
  }
  return parts.length ? msg('developer', parts.join('\n\n')) : null;
}

function argumentsText(args: string): string {
  return args.trim() ? args : '{}';
}

/**
 * Earlier reasoning is kept only for assistant turns after the last user message (a tool loop in
 * progress); once a final answer was given and the user spoke again, it is dropped.
 */
export function renderHarmony(input: RenderInput): string {
  const kwargs = input.chatTemplateKwargs ?? {};
  const { messages } = input;
  // Leading system/developer messages are the developer instructions; later ones stay in place.
  let lead = 0;
  const instructions: string[] = [];
  while (lead < messages.length && (messages[lead]!.role === 'system' || messages[lead]!.role === 'developer')) {
    instructions.push(contentToText(messages[lead]!.content));
    lead++;
  }
  const out = [systemMessage(kwargs, Boolean(input.tools?.length))];
  const dev = developerMessage(instructions, input);
  if (dev) out.push(dev);
  let lastUser = -1;
  messages.forEach((m, i) => { if (m.role === 'user') lastUser = i; });
  const callNames = new Map<string, string>();
  for (let i = lead; i < messages.length; i++) out.push(renderMessage(messages[i]!, i > lastUser, callNames, input));
  if (input.addGenerationPrompt) out.push(`${H.start}assistant`);
  return out.join('');
}

function renderMessage(m: ChatMessage, keepReasoning: boolean, callNames: Map<string, string>, input: RenderInput): string {
  const text = contentToText(m.content);
  switch (m.role) {
    case 'user':
      return msg('user', text);
    case 'system':
    case 'developer':
      return msg(m.role === 'developer' && input.developerRole === 'developer' ? 'developer' : 'system', text);
    case 'tool': {
      const name = callNames.get(m.tool_call_id ?? '') ?? m.name ?? 'unknown';
      return msg(`functions.${name} to=assistant${H.channel}commentary`, text);
    }
    case 'assistant': {
      const parts: string[] = [];
      const calls = m.tool_calls ?? [];
      if (m.reasoning && keepReasoning) parts.push(msg(`assistant${H.channel}analysis`, m.reasoning));
      if (calls.length) {
        if (text) parts.push(msg(`assistant${H.channel}commentary`, text));
        for (const c of calls) {
          callNames.set(c.id, c.function.name);
          parts.push(msg(`assistant${H.channel}commentary to=functions.${c.function.name} ${H.constrain}json`, argumentsText(c.function.arguments), H.call));
        }
      } else {
        parts.push(msg(`assistant${H.channel}final`, text));
      }
      return parts.join('');
    }
    default:
      return msg(m.role, text);
  }
}
