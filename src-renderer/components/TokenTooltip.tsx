// Floating details for the hovered token: position, id, piece text (escaped) and logprob.
import { forwardRef, useImperativeHandle, useState } from 'react';
import { formatLogprob, formatProb } from '../lib/format.js';

export interface TokenHover {
  index: number;
  promptCount: number;
  id: number;
  piece: string | undefined;
  logprob: number | undefined;
  /** Loss mask at this token: -1 context, 0, 1; undefined without an overlay. */
  mask?: number;
  marker?: string;
  /** What the tokens after the prompt are called ("output", "response"). */
  outputLabel?: string;
  rect: { left: number; top: number; bottom: number };
}

export interface TokenTooltipHandle {
  show(hover: TokenHover | null): void;
  current(): TokenHover | null;
}

/** Owns its own state, so hovering re-renders only the tooltip, never the token rows. */
export const TokenTooltip = forwardRef<TokenTooltipHandle>(function TokenTooltip(_props, ref) {
  const [hover, setHover] = useState<TokenHover | null>(null);
  useImperativeHandle(ref, () => ({ show: setHover, current: () => hover }), [hover]);
  return <TooltipBox hover={hover} />;
});

function TooltipBox({ hover }: { hover: TokenHover | null }) {
  if (!hover) return null;
  const isOutput = hover.index >= hover.promptCount;
  const pos = isOutput ? hover.index - hover.promptCount : hover.index;
  const below = hover.rect.bottom + 120 < window.innerHeight;
  const style = {
    left: Math.max(8, Math.min(hover.rect.left, window.innerWidth - 300)),
    top: below ? hover.rect.bottom + 6 : hover.rect.top - 6,
    transform: below ? undefined : 'translateY(-100%)',
  };
  return (
    <div className="tok-tooltip" role="tooltip" style={style}>
      <div className="tt-title">
        {isOutput ? (hover.outputLabel ?? 'output') : 'prompt'} token #{pos.toLocaleString('en-US')}
      </div>
      <dl>
        <dt>id</dt>
        <dd className="mono">{hover.id}</dd>
        <dt>piece</dt>
        <dd className="mono tt-piece">{hover.piece === undefined ? <span className="muted">n/a</span> : JSON.stringify(hover.piece)}</dd>
        {hover.mask !== undefined && (
          <>
            <dt>loss mask</dt>
            <dd className="mono">{hover.mask === 1 ? '1 (trained)' : hover.mask === 0 ? '0 (not trained)' : '— (context)'}</dd>
          </>
        )}
        {hover.marker && (
          <>
            <dt>marker</dt>
            <dd>{hover.marker}</dd>
          </>
        )}
        {(isOutput || hover.logprob !== undefined) && (
          <>
            <dt>logprob</dt>
            <dd className="mono">{formatLogprob(hover.logprob)}</dd>
            <dt>p</dt>
            <dd className="mono">{formatProb(hover.logprob)}</dd>
          </>
        )}
      </dl>
    </div>
  );
}
