// Legend for the token colours: prompt tokens are grey, output tokens coloured by probability.
import { LOGPROB_BUCKETS } from '../lib/logprob.js';

export function LogprobLegend() {
  return (
    <div className="legend" aria-label="Token colour legend">
      <span className="legend-item">
        <span className="tok-swatch tok-prompt" /> prompt
      </span>
      <span className="legend-sep" />
      <span className="legend-title">output p = e^logprob:</span>
      {LOGPROB_BUCKETS.map((b) => (
        <span key={b.index} className="legend-item">
          <span className={`tok-swatch lp${b.index}`} /> {b.label}
        </span>
      ))}
    </div>
  );
}
