// A collapsible titled block holding one JSON value (request as received / as served / response).
// Nothing inside is rendered until it is opened.
import { useState } from 'react';
import { JsonTree } from './JsonTree.js';

export function JsonSection({ title, value, hint }: { title: string; value: unknown; hint?: string }) {
  const [open, setOpen] = useState(false);
  const [raw, setRaw] = useState(false);
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(JSON.stringify(value, null, 2));
      setCopied(true);
      setTimeout(() => setCopied(false), 1200);
    } catch {
      /* clipboard unavailable */
    }
  };
  return (
    <section className={`jsection ${open ? 'open' : ''}`}>
      <header className="jsection-head">
        <button type="button" className="jsection-toggle" aria-expanded={open} onClick={() => setOpen(!open)}>
          <span className="j-caret">{open ? '▾' : '▸'}</span> {title}
          {hint && <span className="muted"> · {hint}</span>}
        </button>
        {open && (
          <span className="jsection-tools">
            <button type="button" className="btn btn-small" onClick={() => setRaw(!raw)}>
              {raw ? 'Tree' : 'Raw'}
            </button>
            <button type="button" className="btn btn-small" onClick={copy}>
              {copied ? 'Copied' : 'Copy'}
            </button>
          </span>
        )}
      </header>
      {open &&
        (value === undefined || value === null ? (
          <div className="muted jsection-body">none</div>
        ) : raw ? (
          <pre className="jsection-body json-raw">{JSON.stringify(value, null, 2)}</pre>
        ) : (
          <div className="jsection-body">
            <JsonTree value={value} />
          </div>
        ))}
    </section>
  );
}
