// Folds streamed canonical deltas into the final assistant message, whatever engine produced them.
import type { CanonicalDelta } from './types.js';

export interface CollectedMessage {
  content: string | null;
  reasoning: string | null;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
}

export class DeltaCollector {
  private content = '';
  private reasoning = '';
  private readonly calls = new Map<number, { id: string; name: string; arguments: string }>();

  add(d: CanonicalDelta): void {
    if (d.kind === 'content') this.content += d.text;
    else if (d.kind === 'reasoning') this.reasoning += d.text;
    else {
      let call = this.calls.get(d.index);
      if (!call) { call = { id: d.id ?? `call_${d.index}`, name: '', arguments: '' }; this.calls.set(d.index, call); }
      if (d.id) call.id = d.id;
      if (d.name) call.name += d.name;
      call.arguments += d.arguments;
    }
  }

  result(): CollectedMessage {
    return {
      content: this.content || null,
      reasoning: this.reasoning || null,
      toolCalls: [...this.calls.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c),
    };
  }
}
