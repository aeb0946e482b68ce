// Turns canonical messages into what vLLM hands to a chat template, then renders it.
import { Template } from '@huggingface/jinja';
import { contentToText } from '../../core/content-text.js';
import type { ChatMessage, FunctionTool } from '../../core/types.js';

export interface RenderOptions {
  tools?: FunctionTool[];
  addGenerationPrompt?: boolean;
  chatTemplateKwargs?: Record<string, unknown>;
  /** The role `developer` messages get; absent: 'system' unless the template names the developer role. */
  developerRole?: 'system' | 'developer';
}

function parseArguments(args: string): unknown {
  // vLLM json.loads the arguments so the template's tojson prints them; keep invalid JSON as the raw string.
  try {
    const v = JSON.parse(args);
    return v !== null && typeof v === 'object' ? v : args;
  } catch {
    return args;
  }
}

export function toTemplateMessages(messages: ChatMessage[], renameDeveloper: boolean): Record<string, unknown>[] {
  return messages.map((m) => {
    const out: Record<string, unknown> = {
      role: m.role === 'developer' && renameDeveloper ? 'system' : m.role,
      content: contentToText(m.content),
    };
    if (m.name !== undefined) out.name = m.name;
    if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id;
    if (m.role === 'assistant') {
      if (m.reasoning != null) out.reasoning_content = m.reasoning;
      if (m.tool_calls?.length) {
        out.tool_calls = m.tool_calls.map((tc) => ({
          id: tc.id,
          type: tc.type,
          function: { name: tc.function.name, arguments: parseArguments(tc.function.arguments) },
        }));
      }
    }
    return out;
  });
}

export class ChatTemplateRenderer {
  private readonly template: Template;
  /** Qwen3's template silently drops unknown roles: without an explicit choice, `developer` becomes `system` in place. */
  private readonly templateKnowsDeveloper: boolean;

  constructor(source: string, private readonly specialTokens: Record<string, unknown>) {
    this.template = new Template(source);
    this.templateKnowsDeveloper = source.includes('developer');
  }

  render(messages: ChatMessage[], opts: RenderOptions = {}): string {
    const ctx: Record<string, unknown> = {
      ...this.specialTokens,
      ...opts.chatTemplateKwargs,
      messages: toTemplateMessages(messages, (opts.developerRole ?? (this.templateKnowsDeveloper ? 'developer' : 'system')) === 'system'),
      add_generation_prompt: opts.addGenerationPrompt ?? true,
    };
    if (opts.tools?.length) ctx.tools = opts.tools;
    return this.template.render(ctx);
  }
}
