// What diverged at a chain break: the tokens the trace had from the divergence index on (what the next
// prompt should have extended) next to what the next prompt had instead, token by token.
import { useMemo } from 'react';
import type { Completion, Trace, TraceBreak } from '../backend/types.js';
import { diffSequences } from '../lib/diff.js';
import { formatInt } from '../lib/format.js';
import { displayPiece } from '../lib/tokenLayout.js';
import { traceTokens } from '../lib/traceOverlay.js';
import { BREAK_HELP } from './breaks.js';

/** Tokens shown on each side from the divergence index. */
const WINDOW = 80;

function Run({ ids, pieces, changed, label }: { ids: number[]; pieces: Array<string | undefined>; changed: Set<number>; label: string }) {
  return (
    <div className="tokdiff-side div-side" aria-label={label}>
      {ids.map((id, i) => (
        <span key={i} className={`tok ${changed.has(i) ? (label.startsWith('trace') ? 'tok-del' : 'tok-ins') : 'tok-eq'}`} title={`id ${id}`}>
          {pieces[i] === undefined ? `‹${id}›` : displayPiece(pieces[i]!)}
        </span>
      ))}
      {ids.length === 0 && <span className="muted">(nothing: the prompt ends here)</span>}
    </div>
  );
}

export function DivergenceView({ trace, brk, completions, traceNumber, nextNumber }: { trace: Trace; brk: TraceBreak; completions: Map<string, Completion>; traceNumber: number; nextNumber?: number }) {
  const next = completions.get(brk.atCompletionId);
  const view = useMemo(() => {
    const at = brk.tokenIndex ?? 0;
    const { promptPieces, outputPieces } = traceTokens(trace, completions);
    const full = trace.promptIds.concat(trace.responseIds);
    const fullPieces: Array<string | undefined> = promptPieces && outputPieces ? promptPieces.concat(outputPieces) : [];
    const a = full.slice(at, at + WINDOW);
    const aPieces = a.map((_, i) => fullPieces[at + i]);
    const b = (next?.promptIds ?? []).slice(at, at + WINDOW);
    const bPieces = b.map((_, i) => next?.promptPieces?.[at + i]);
    const d = diffSequences(a, b, { maxD: 200 });
    const changedA = new Set<number>();
    const changedB = new Set<number>();
    for (const h of d.hunks) {
      if (h.op === 'delete') h.items.forEach((_, i) => changedA.add(h.a + i));
      if (h.op === 'insert') h.items.forEach((_, i) => changedB.add(h.b + i));
    }
    const context = fullPieces.slice(Math.max(0, at - 12), at).map((p) => (p === undefined ? '' : displayPiece(p))).join('');
    const droppedThink = aPieces.some((p) => p?.includes('<think>')) && !bPieces.some((p) => p?.includes('<think>'));
    return { at, a, aPieces, b, bPieces, changedA, changedB, context, droppedThink, restA: full.length - at, restB: (next?.promptIds.length ?? 0) - at };
  }, [trace, brk, completions, next]);
  const nextSeq = next ? next.seq + 1 : null;
  return (
    <section className="card divergence" data-testid="divergence" aria-label="What diverged at the chain break">
      <header className="card-head">
        <h3>
          Trace #{traceNumber} breaks at token {formatInt(view.at)}: <span className="badge badge-warn">{brk.reason}</span>
        </h3>
        <span className="muted">{BREAK_HELP[brk.reason] ?? ''}</span>
      </header>
      {view.droppedThink && (
        <div className="banner banner-warn" data-testid="reasoning-dropped">
          The next prompt left out the earlier turn&apos;s reasoning (&lt;think&gt;…&lt;/think&gt;): the agent or the chat template dropped it from the history.
        </div>
      )}
      <div className="muted div-context">
        shared up to here: <span className="mono">…{view.context}</span>
      </div>
      <div className="side-by-side">
        <div>
          <div className="div-head">
            <span className="ab-tag ab-a">trace</span> #{traceNumber} had ({formatInt(view.restA)} tokens from here)
          </div>
          <Run ids={view.a} pieces={view.aPieces} changed={view.changedA} label="trace tokens from the divergence" />
        </div>
        <div>
          <div className="div-head">
            <span className="ab-tag ab-b">next prompt</span> turn {nextSeq ?? '?'}
            {nextNumber !== undefined ? ` (trace #${nextNumber})` : ''} had instead ({formatInt(view.restB)} tokens from here)
          </div>
          <Run ids={view.b} pieces={view.bPieces} changed={view.changedB} label="next prompt tokens from the divergence" />
        </div>
      </div>
    </section>
  );
}
