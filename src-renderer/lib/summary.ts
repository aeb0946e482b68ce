// One-line summary of a completion's response (canonical OpenAI-chat-like shape), tolerant of
// missing fields: "calculator({"expression":"17*23"})" or the start of the text.

interface Msg {
  content?: unknown;
  reasoning?: unknown;
  tool_calls?: Array<{ function?: { name?: unknown; arguments?: unknown }; name?: unknown; arguments?: unknown }>;
}

function messageOf(response: unknown): Msg | null {
  if (!response || typeof response !== 'object') return null;
  const r = response as { message?: Msg; choices?: Array<{ message?: Msg }> };
  return r.message ?? r.choices?.[0]?.message ?? null;
}

export function summarizeResponse(response: unknown, max = 140): string {
  const m = messageOf(response);
  if (!m) return '';
  const calls = (m.tool_calls ?? []).map((c) => {
    const name = String(c.function?.name ?? c.name ?? 'tool');
    const args = String(c.function?.arguments ?? c.arguments ?? '');
    return `${name}(${args.length > 60 ? `${args.slice(0, 60)}…` : args})`;
  });
  if (calls.length) return `→ ${calls.join(', ')}`.slice(0, max);
  const text = typeof m.content === 'string' ? m.content : '';
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat) return flat.length > max ? `${flat.slice(0, max)}…` : flat;
  if (typeof m.reasoning === 'string' && m.reasoning.trim()) return `(reasoning only) ${m.reasoning.trim().slice(0, max - 17)}`;
  return '';
}
