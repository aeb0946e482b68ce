// TRL SFTTrainer, conversational format: `messages` (+ `tools`), which the trainer renders with the model's
// chat template. Reasoning goes where the template reads it: Qwen3's (and GLM-4.5's, DeepSeek-V3.1's)
// read `reasoning_content` on assistant messages; Rollgate's canonical `reasoning` would be dropped.
import type { ChatMessage } from '../../types.js';
import type { SftRow } from '../rows.js';

export function templateMessage(m: ChatMessage): Record<string, unknown> {
  const { reasoning, dialect_extras: _extras, ...rest } = m;
  return reasoning ? { ...rest, reasoning_content: reasoning } : rest;
}

export function trlSftRow(row: SftRow): Record<string, unknown> {
  const { messages, tools, ...rest } = row;
  return { messages: messages.map(templateMessage), ...(tools ? { tools } : {}), ...rest };
}
