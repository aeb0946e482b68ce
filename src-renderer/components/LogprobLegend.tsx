// Legend for the token colours: prompt tokens are grey, output tokens coloured by probability; with
// the loss-mask overlay, mask-0 tokens are hatched and mask-1 tokens underlined.
import { LOGPROB_BUCKETS } from '../lib/logprob.js';

export function LogprobLegend({ mask = false }: { mask?: boolean }) {
  return (
    <div className="legend" aria-label="Token colour legend">
      <span className="legend-item">
        <span className="tok-swatch tok-prompt" /> {mask ? 'context (no loss)' : 'prompt'}
      </span>
      {mask && (
        <>
          <span className="legend-item">
            <span className="tok-swatch tok-m0" /> mask 0
          </span>
          <span className="legend-item">
            <span className="tok-swatch lp0 tok-m1" /> mask 1
          </span>
          <span className="legend-item">
            <span className="tok-swatch tok-turn-sw" /> turn start
          </span>
          <span className="legend-item">
            <span className="tok-swatch tok-break-sw" /> chain break
          </span>
        </>
      )}
      <span className="legend-sep" />
      <span className="legend-title">{mask ? 'mask-1 ' : 'output '}p = e^logprob:</span>
      {LOGPROB_BUCKETS.map((b) => (
        <span key={b.index} className="legend-item">
          <span className={`tok-swatch lp${b.index}`} /> {b.label}
        </span>
      ))}
    </div>
  );
}
