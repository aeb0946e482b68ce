// A session as the agent saw it: each conversation's messages (system / user, assistant with its
// reasoning collapsed, tool calls with their arguments, tool results), ending with the model's last
// answer. One conversation per training trace (sub-agents and title calls are their own).
import { useState } from 'react';
import { api } from '../backend/client.js';
import type { TranscriptMessage } from '../backend/types.js';
import { Empty, ErrorState, Loading } from '../components/States.js';
import { useAsync } from '../lib/useAsync.js';

function text(content: TranscriptMessage['content']): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.map((p) => (typeof p.text === 'string' ? p.text : `[${p.type}]`)).join('\n');
}

function prettyArgs(args: string): string {
  try {
    return JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    return args;
  }
}

function Message({ m, n }: { m: TranscriptMessage; n: number }) {
  const body = text(m.content);
  return (
    <article className={`msg msg-${m.role}`} data-role={m.role} aria-label={`${m.role} message ${n}`}>
      <header className="msg-head">
        <span className="msg-role">{m.role === 'tool' ? `tool result${m.name ? ` · ${m.name}` : ''}` : m.role}</span>
        {m.tool_call_id && <span className="muted mono">for {m.tool_call_id}</span>}
        <span className="spacer" />
        <span className="muted">#{n}</span>
      </header>
      {m.reasoning && (
        <details className="msg-reasoning">
          <summary>reasoning ({m.reasoning.length.toLocaleString('en-US')} chars)</summary>
          <pre className="msg-text">{m.reasoning}</pre>
        </details>
      )}
      {body && <pre className="msg-text">{body}</pre>}
      {(m.tool_calls ?? []).map((c) => (
        <div key={c.id} className="msg-call" data-tool={c.function.name}>
          <span className="msg-call-name">→ {c.function.name}</span> <span className="muted mono">{c.id}</span>
          <pre className="msg-text">{prettyArgs(c.function.arguments)}</pre>
        </div>
      ))}
      {!body && !m.reasoning && !(m.tool_calls ?? []).length && <span className="muted">(empty)</span>}
    </article>
  );
}

export function TranscriptView({ sessionId, version }: { sessionId: string; version: string }) {
  const t = useAsync((signal) => api.transcript(sessionId, signal), [sessionId, version]);
  const [pick, setPick] = useState(0);
  if (t.loading && !t.data) return <Loading label="Reading the conversation…" />;
  if (t.error && !t.data) return t.status === 404 ? <Empty title="No transcript route on this server" /> : <ErrorState message={t.error} onRetry={t.reload} />;
  const convs = t.data?.conversations ?? [];
  if (convs.length === 0) return <Empty title="No conversation yet">Messages appear once the agent gets an answer.</Empty>;
  const k = Math.min(pick, convs.length - 1);
  const c = convs[k];
  return (
    <section className="card transcript" data-testid="transcript" aria-label="Transcript">
      <header className="card-head">
        <h2>Transcript</h2>
        <span className="muted">{c.messages.length} messages · as the agent sent them, then the answer</span>
        <span className="spacer" />
        {convs.length > 1 && (
          <label className="field-inline">
            Conversation
            <select className="input input-narrow" value={k} onChange={(e) => setPick(Number(e.target.value))} aria-label="Conversation">
              {convs.map((x, i) => (
                <option key={x.traceId} value={i}>
                  trace #{i + 1} · {x.messages.length} messages
                </option>
              ))}
            </select>
          </label>
        )}
      </header>
      {(c.tools?.length ?? 0) > 0 && <div className="muted">tools: {c.tools!.map((x) => x.function.name).join(', ')}</div>}
      <div className="msgs">
        {c.messages.map((m, i) => (
          <Message key={i} m={m} n={i + 1} />
        ))}
      </div>
    </section>
  );
}
