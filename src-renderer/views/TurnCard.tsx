// One completion (turn) of a session: header with status, timings and token counts; when open, the
// request as received / as served, the response, and the token view.
import type { ReactNode } from 'react';
import type { Completion } from '../backend/types.js';
import { StatusBadge } from '../components/Badges.js';
import { EngineLabel } from '../components/EngineLabel.js';
import { JsonSection } from '../components/JsonSection.js';
import { TokenView } from '../components/TokenView.js';
import { formatInt, formatMs, formatTime, shortId } from '../lib/format.js';
import { summarizeResponse } from '../lib/summary.js';

function Stat({ label, mono, children }: { label: string; mono?: boolean; children: ReactNode }) {
  return (
    <div className="stat">
      <div className="stat-label">{label}</div>
      <div className={`stat-value ${mono ? 'mono' : ''}`}>{children}</div>
    </div>
  );
}

interface Props {
  c: Completion;
  open: boolean;
  onToggle: () => void;
  retryOfSeq?: number;
}

export function TurnCard({ c, open, onToggle, retryOfSeq }: Props) {
  const summary = summarizeResponse(c.response);
  return (
    <article className={`turn ${open ? 'open' : ''} turn-status-${c.status}`} data-completion-id={c.id} aria-label={`Turn ${c.seq}`}>
      <button type="button" className="turn-head" aria-expanded={open} onClick={onToggle}>
        <span className="j-caret">{open ? '▾' : '▸'}</span>
        <span className="turn-seq">#{c.seq}</span>
        <StatusBadge status={c.status} />
        {c.finishReason && <span className="chip">{c.finishReason}</span>}
        {c.retryOf && <span className="chip chip-warn">retry of {retryOfSeq !== undefined ? `#${retryOfSeq}` : shortId(c.retryOf)}</span>}
        <span className="turn-summary ellipsis">{summary || <span className="muted">no response</span>}</span>
        <span className="turn-meta">
          <span title="prompt → output tokens">
            {formatInt(c.promptIds.length)} → {formatInt(c.outputIds.length)} tok
          </span>
          <span title="total time">{formatMs(c.timings?.totalMs)}</span>
        </span>
      </button>
      {open && (
        <div className="turn-body">
          {c.error && (
            <div className="turn-errbox" role="alert">
              <strong>Error:</strong> {c.error}
            </div>
          )}
          <div className="stats">
            <Stat label="Engine">
              <EngineLabel id={c.engineId} />
            </Stat>
            <Stat label="Replica" mono>
              {c.replica}
            </Stat>
            <Stat label="Dialect">{c.dialect}</Stat>
            <Stat label="Policy" mono>
              v{c.policyVersion}
            </Stat>
            <Stat label="Queue">{formatMs(c.timings?.queueMs)}</Stat>
            <Stat label="TTFT">{formatMs(c.timings?.ttftMs)}</Stat>
            <Stat label="Total">{formatMs(c.timings?.totalMs)}</Stat>
            <Stat label="Usage (prompt + completion)">
              {c.usage ? `${formatInt(c.usage.prompt_tokens)} + ${formatInt(c.usage.completion_tokens)} = ${formatInt(c.usage.total_tokens)}` : '—'}
            </Stat>
            <Stat label="Created">{formatTime(c.createdAt)}</Stat>
            <Stat label="Completion id" mono>
              {c.id}
            </Stat>
          </div>
          <div className="jsections">
            <JsonSection title="Request as received" hint="from the agent, secrets removed" value={c.requestReceived} />
            <JsonSection title="Request as served" hint="sent to the engine" value={c.requestServed} />
            <JsonSection title="Response" hint="as returned to the agent" value={c.response} />
          </div>
          <h3 className="subhead">Tokens</h3>
          <TokenView
            promptIds={c.promptIds ?? []}
            outputIds={c.outputIds ?? []}
            outputLogprobs={c.outputLogprobs ?? []}
            promptPieces={c.promptPieces}
            outputPieces={c.outputPieces}
          />
        </div>
      )}
    </article>
  );
}
