// vLLM's "string" content format: text parts joined with newlines, other parts dropped. Pure.
import type { ChatMessage, ContentPart } from './types.js';

export function contentToText(content: ChatMessage['content']): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return (content as ContentPart[])
    .filter((p) => p && p.type === 'text' && typeof (p as { text?: unknown }).text === 'string')
    .map((p) => (p as { text: string }).text)
    .join('\n');
}
