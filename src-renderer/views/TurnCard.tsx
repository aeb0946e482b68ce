// One completion (turn) of a session: header with status, timings and token counts; when open, the
// request as received / as served, the response, a diff between received and served, and the token
// view (with the loss mask of the trace this turn belongs to, when traces are loaded).
import { useMemo, useState, type ReactNode } from 'react';
import type { Completion } from '../backend/types.js';
import { StatusBadge } from '../components/Badges.js';
import { DiffView } from '../components/DiffView.js';
import { EngineLabel } from '../components/EngineLabel.js';
import { JsonSection } from '../components/JsonSection.js';
import { TokenView } from '../components/TokenView.js';
import { formatInt, formatMs, formatTime, shortId } from '../lib/format.js';
import { jsonLines } from '../lib/jsonLines.js';
import { summarizeResponse } from '../lib/summary.js';
import type { Overlay } from '../lib/traceOverlay.js';

function Stat({ label, mono, children }: { label: string; mono?: boolean; children: ReactNode }) {
  return (
    <div className="stat">
      <div className="stat-label">{label}</div>
      <div className={`stat-value ${mono ? 'mono' : ''}`}>{children}</div>
    </div>
  );
}

function ReceivedServedDiff({ c }: { c: Completion }) {
  const [open, setOpen] = useState(false);
  const lines = useMemo(() => (open ? { a: jsonLines(c.requestReceived ?? null), b: jsonLines(c.requestServed ?? null) } : null), [open, c.requestReceived, c.requestServed]);
  return (
    <section className={`jsection ${open ? 'open' : ''}`}>
      <header className="jsection-head">
        <button type="button" className="jsection-toggle" aria-expanded={open} onClick={() => setOpen(!open)}>
          <span className="j-caret">{open ? '▾' : '▸'}</span> Diff: received → served
          <span className="muted"> · what Rollgate changed on the way to the engine</span>
        </button>
      </header>
      {open && lines && (
        <div className="jsection-body">
          <DiffView left={lines.a} right={lines.b} leftTitle="as received (agent)" rightTitle={`as served (${c.engineId})`} testId="served-diff" />
        </div>
      )}
    </section>
  );
}

interface Props {
  c: Completion;
  open: boolean;
  onToggle: () => void;
  retryOfSeq?: number;
  overlay?: Overlay | null;
  traceLabel?: string;
}

export function TurnCard({ c, open, onToggle, retryOfSeq, overlay, traceLabel }: Props) {
  const summary = summarizeResponse(c.response);
  return (
    <article className={`turn ${open ? 'open' : ''} turn-status-${c.status}`} data-completion-id={c.id} aria-label={`Turn ${c.seq + 1}`}>
      <button type="button" className="turn-head" aria-expanded={open} onClick={onToggle}>
        <span className="j-caret">{open ? '▾' : '▸'}</span>
        <span className="turn-seq" title={`seq ${c.seq}`}>Turn {c.seq + 1}</span>
        <StatusBadge status={c.status} />
        {c.finishReason && <span className="chip">{c.finishReason}</span>}
        {c.retryOf && <span className="chip chip-warn">retry of {retryOfSeq !== undefined ? `turn ${retryOfSeq + 1}` : shortId(c.retryOf)}</span>}
        {traceLabel && <span className="chip" title="the training trace holding this turn">{traceLabel}</span>}
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
            <ReceivedServedDiff c={c} />
            <JsonSection title="Response" hint="as returned to the agent" value={c.response} />
          </div>
          <h3 className="subhead">Tokens{overlay ? ` · loss mask of trace turn ${overlay.turn + 1}` : ''}</h3>
          <TokenView
            promptIds={c.promptIds ?? []}
            outputIds={c.outputIds ?? []}
            outputLogprobs={c.outputLogprobs ?? []}
            promptPieces={c.promptPieces}
            outputPieces={c.outputPieces}
            mask={overlay?.mask}
            logprobAt={overlay?.logprobAt}
            markers={overlay?.markers}
          />
        </div>
      )}
    </article>
  );
}
