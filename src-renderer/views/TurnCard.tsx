// One completion (turn) of a session: header with status, timings and token counts; when open, the
// request as received / as served, the response, and the token view.
import type { Completion } from '../api/types.js';
import { StatusBadge } from '../components/Badges.js';
import { EngineLabel } from '../components/EngineLabel.js';
import { JsonSection } from '../components/JsonSection.js';
import { TokenView } from '../components/TokenView.js';
import { formatInt, formatMs, formatTime, shortId } from '../lib/format.js';
import { summarizeResponse } from '../lib/summary.js';

interface Props {
  c: Completion;
  open: boolean;
  onToggle: () => void;
  retryOfSeq?: number;
}

export function TurnCard({ c, open, onToggle, retryOfSeq }: Props) {
  const summary = summarizeResponse(c.response);
  return (
    <article className={`turn ${open ? 'open' : ''} turn-${c.status}`} data-completion-id={c.id} aria-label={`Turn ${c.seq}`}>
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
            <div className="turn-error" role="alert">
              <strong>Error:</strong> {c.error}
            </div>
          )}
          <dl className="facts">
            <dt>Engine</dt>
            <dd>
              <EngineLabel id={c.engineId} /> <span className="muted mono">{c.replica}</span>
            </dd>
            <dt>Dialect</dt>
            <dd>{c.dialect}</dd>
            <dt>Policy version</dt>
            <dd className="mono">{c.policyVersion}</dd>
            <dt>Timings</dt>
            <dd>
              queue <b>{formatMs(c.timings?.queueMs)}</b> · ttft <b>{formatMs(c.timings?.ttftMs)}</b> · total{' '}
              <b>{formatMs(c.timings?.totalMs)}</b>
            </dd>
            <dt>Usage</dt>
            <dd>
              {c.usage
                ? `${formatInt(c.usage.prompt_tokens)} prompt + ${formatInt(c.usage.completion_tokens)} completion = ${formatInt(c.usage.total_tokens)}`
                : '—'}
            </dd>
            <dt>Created</dt>
            <dd>
              {formatTime(c.createdAt)} <span className="muted mono">{c.id}</span>
            </dd>
          </dl>
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
