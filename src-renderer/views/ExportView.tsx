// Export: filters (batch, engine, session, reward range), format and builder → GET /api/export,
// streamed: bytes and lines are counted as they arrive, then the file is handed to the browser as a
// download (Electron shows its save dialog). Where the File System Access API exists, "Save as…"
// streams straight to disk instead (constant memory).
import { useEffect, useRef, useState } from 'react';
import { errorMessage, exportUrl, type ExportQuery } from '../backend/client.js';
import type { BuilderName } from '../backend/types.js';
import { Empty } from '../components/States.js';
import { StatTile } from '../components/Widgets.js';
import { batchLabel, batchName } from '../lib/batch.js';
import { formatInt, formatMs } from '../lib/format.js';
import { useBatches } from '../store/batches.js';
import { useEngines } from '../store/engines.js';

interface Progress {
  state: 'idle' | 'running' | 'done' | 'error' | 'cancelled';
  bytes: number;
  lines: number;
  startedAt: number;
  ms: number;
  filename: string;
  error: string | null;
  preview: string[];
  savedTo: 'download' | 'file' | null;
}

const idle: Progress = { state: 'idle', bytes: 0, lines: 0, startedAt: 0, ms: 0, filename: '', error: null, preview: [], savedTo: null };

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(2)} MB`;
}

function filenameOf(res: Response, fallback: string): string {
  const cd = res.headers.get('content-disposition') ?? '';
  const m = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(cd);
  return m ? decodeURIComponent(m[1]) : fallback;
}

interface Writer { write(chunk: Uint8Array): Promise<void> | void; close(): Promise<void> | void; abort?(): Promise<void> | void }

type SavePicker = (opts: { suggestedName?: string; types?: Array<{ description: string; accept: Record<string, string[]> }> }) => Promise<{ createWritable(): Promise<Writer> }>;

/** Exports assembled in memory (the plain download button) stop here; the streaming ways have no limit. */
const MAX_IN_MEMORY_BYTES = 512 * 2 ** 20;

export function ExportView({ batch: initialBatch }: { batch?: string }) {
  const batches = useBatches();
  const engines = useEngines();
  const [q, setQ] = useState<ExportQuery>({ batch: initialBatch, format: 'train', builder: 'prefix-merge' });
  const [minR, setMinR] = useState('');
  const [maxR, setMaxR] = useState('');
  const [p, setP] = useState<Progress>(idle);
  const ctrl = useRef<AbortController | null>(null);
  const picker = (window as unknown as { showSaveFilePicker?: SavePicker }).showSaveFilePicker;

  useEffect(() => {
    if (!batches.data) void batches.fetch({ quiet: true });
    if (!engines.data) void engines.fetch();
    return () => ctrl.current?.abort();
  }, []);
  useEffect(() => {
    if (initialBatch) setQ((x) => ({ ...x, batch: initialBatch }));
  }, [initialBatch]);

  const rangeError = (() => {
    const a = minR.trim() === '' ? undefined : Number(minR);
    const b = maxR.trim() === '' ? undefined : Number(maxR);
    if (a !== undefined && !Number.isFinite(a)) return 'min reward is not a number';
    if (b !== undefined && !Number.isFinite(b)) return 'max reward is not a number';
    if (a !== undefined && b !== undefined && a > b) return 'min reward is greater than max reward';
    return null;
  })();
  const query: ExportQuery = { ...q, minReward: minR.trim() === '' ? undefined : Number(minR), maxReward: maxR.trim() === '' ? undefined : Number(maxR) };
  const url = exportUrl(query);

  const run = async (toFile: boolean) => {
    ctrl.current?.abort();
    const ac = new AbortController();
    ctrl.current = ac;
    const fallback = `rollgate-${q.batch ?? 'all'}-${q.preset ?? q.format}-${q.builder}.jsonl`;
    let writer: Writer | null = null;
    if (toFile && picker) {
      try {
        const handle = await picker({ suggestedName: fallback, types: [{ description: 'JSON Lines', accept: { 'application/x-ndjson': ['.jsonl'] } }] });
        writer = await handle.createWritable();
      } catch {
        return; // the user closed the dialog
      }
    }
    const startedAt = performance.now();
    setP({ ...idle, state: 'running', startedAt, filename: fallback });
    try {
      const res = await fetch(url, { signal: ac.signal });
      if (!res.ok) throw new Error(`${res.status} ${await errorMessage(res)}`);
      if (!res.body) throw new Error('the response has no body');
      const filename = filenameOf(res, fallback);
      const reader = res.body.getReader();
      const chunks: Uint8Array[] = [];
      const decoder = new TextDecoder();
      let bytes = 0;
      let lines = 0;
      let head = '';
      let last = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        bytes += value.byteLength;
        for (let i = 0; i < value.length; i++) if (value[i] === 10) lines++;
        if (head.length < 4000) head += decoder.decode(value.subarray(0, 4000), { stream: true });
        if (writer) await writer.write(value);
        else if (bytes > MAX_IN_MEMORY_BYTES) {
          ac.abort();
          throw new Error(`the export is larger than ${MAX_IN_MEMORY_BYTES / 2 ** 20} MB, too large to assemble in this window: use “Save as…” or “Direct download”, which stream to disk`);
        } else chunks.push(value);
        const now = performance.now();
        if (now - last > 100) {
          last = now;
          setP((x) => ({ ...x, bytes, lines, ms: now - startedAt, filename }));
        }
      }
      const preview = head.split('\n').filter(Boolean).slice(0, 3);
      if (writer) await writer.close();
      else {
        const blob = new Blob(chunks as BlobPart[], { type: 'application/x-ndjson' });
        const href = URL.createObjectURL(blob);
        const a = document.createElement('a');
        a.href = href;
        a.download = filename;
        document.body.appendChild(a);
        a.click();
        a.remove();
        setTimeout(() => URL.revokeObjectURL(href), 60_000);
      }
      setP({ state: 'done', bytes, lines, startedAt, ms: performance.now() - startedAt, filename, error: null, preview, savedTo: writer ? 'file' : 'download' });
    } catch (err) {
      await writer?.abort?.();
      if ((err as Error).name === 'AbortError') setP((x) => ({ ...x, state: 'cancelled', ms: performance.now() - startedAt }));
      else setP((x) => ({ ...x, state: 'error', error: (err as Error).message, ms: performance.now() - startedAt }));
    }
  };

  const running = p.state === 'running';
  const rate = p.ms > 0 ? (p.bytes / p.ms) * 1000 : 0;
  const set = <K extends keyof ExportQuery>(k: K, v: ExportQuery[K]) => setQ({ ...q, [k]: v });

  return (
    <div className="view">
      <div className="view-head">
        <h1>Export traces</h1>
        <span className="muted">JSONL, one trace per line (DESIGN §8)</span>
      </div>
      <form className="card form" aria-label="Export options" onSubmit={(e) => { e.preventDefault(); void run(false); }}>
        <div className="field-row">
          <label className="field">
            <span className="field-label">Batch</span>
            <select className="input" aria-label="Batch" value={q.batch ?? ''} onChange={(e) => set('batch', e.target.value || undefined)}>
              <option value="">all batches and sessions</option>
              {(batches.data ?? []).map((b) => (
                <option key={b.id} value={b.id}>
                  {batchName(b)} · {batchLabel(b)} · {b.status}
                </option>
              ))}
            </select>
            {batches.error && !batches.data && <span className="inline-error">Batch list unavailable: {batches.error}</span>}
          </label>
          <label className="field">
            <span className="field-label">Engine</span>
            <select className="input input-narrow" aria-label="Engine" value={q.engine ?? ''} onChange={(e) => set('engine', e.target.value || undefined)}>
              <option value="">any engine</option>
              {(engines.data ?? []).map((e) => (
                <option key={e.id} value={e.id}>
                  {e.id}
                </option>
              ))}
            </select>
          </label>
          <label className="field">
            <span className="field-label">Session (optional)</span>
            <input className="input input-narrow mono" aria-label="Session id" placeholder="ses_…" value={q.session ?? ''} onChange={(e) => set('session', e.target.value.trim() || undefined)} />
          </label>
        </div>
        <div className="field-row">
          <label className="field">
            <span className="field-label">Min reward</span>
            <input className="input input-narrow" inputMode="decimal" aria-label="Min reward" placeholder="any" value={minR} onChange={(e) => setMinR(e.target.value)} />
          </label>
          <label className="field">
            <span className="field-label">Max reward</span>
            <input className="input input-narrow" inputMode="decimal" aria-label="Max reward" placeholder="any" value={maxR} onChange={(e) => setMaxR(e.target.value)} />
          </label>
          <fieldset className="field" disabled={!!q.preset} title={q.preset ? 'The trainer preset sets the row shape' : undefined}>
            <legend>Format</legend>
            <div className="seg" role="group" aria-label="Format">
              {(['train', 'sft'] as const).map((f) => (
                <button key={f} type="button" className={q.format === f ? 'on' : ''} aria-pressed={q.format === f} onClick={() => set('format', f)}>
                  {f === 'train' ? 'train (ids, mask, logprobs)' : 'sft (messages)'}
                </button>
              ))}
            </div>
          </fieldset>
          <fieldset className="field">
            <legend>Builder</legend>
            <div className="seg" role="group" aria-label="Builder">
              {(['prefix-merge', 'per-request'] as BuilderName[]).map((b) => (
                <button key={b} type="button" className={q.builder === b ? 'on' : ''} aria-pressed={q.builder === b} onClick={() => set('builder', b)}>
                  {b}
                </button>
              ))}
            </div>
          </fieldset>
          <label className="field">
            <span className="field-label">Trainer preset</span>
            <select className="input" aria-label="Trainer preset" value={q.preset ?? ''} onChange={(e) => set('preset', (e.target.value || undefined) as ExportQuery['preset'])}>
              <option value="">none (Rollgate rows)</option>
              {(['verl', 'slime', 'verifiers', 'trl-sft'] as const).map((p) => <option key={p} value={p}>{p}</option>)}
            </select>
          </label>
          <label className="check field-check">
            <input type="checkbox" checked={q.status === 'all'} onChange={(e) => set('status', e.target.checked ? 'all' : undefined)} /> include unfinished sessions
          </label>
          <label className="check field-check">
            <input type="checkbox" checked={!!q.hasReward} onChange={(e) => set('hasReward', e.target.checked)} /> only with a reward
          </label>
          {q.format === 'train' && !q.preset && (
            <label className="check field-check">
              <input type="checkbox" checked={!!q.messages} onChange={(e) => set('messages', e.target.checked)} /> include messages
            </label>
          )}
        </div>
        {rangeError && <span className="inline-error" role="alert">{rangeError}</span>}
        <div className="form-actions">
          <button type="submit" className="btn btn-primary" disabled={running || !!rangeError}>
            {running ? 'Exporting…' : '⬇ Export JSONL'}
          </button>
          {picker && (
            <button type="button" className="btn" disabled={running || !!rangeError} onClick={() => void run(true)} title="Stream straight into a file you choose (constant memory)">
              Save as…
            </button>
          )}
          <a className="btn" href={url} download data-testid="export-direct" title="The browser streams the file to disk itself (constant memory, no progress here)">
            Direct download
          </a>
          {running && (
            <button type="button" className="btn" onClick={() => ctrl.current?.abort()}>
              Cancel
            </button>
          )}
          <code className="export-url" title="The same export from a terminal: curl this URL">
            GET {url}
          </code>
        </div>
      </form>
      {p.state === 'idle' ? (
        <Empty title="Nothing exported yet">Pick the filters and export; lines and bytes are counted as they stream in.</Empty>
      ) : (
        <section className="card" aria-label="Export progress" data-testid="export-progress" data-state={p.state}>
          <header className="card-head">
            <h2>{p.state === 'running' ? 'Exporting…' : p.state === 'done' ? 'Export finished' : p.state === 'cancelled' ? 'Export cancelled' : 'Export failed'}</h2>
            <span className="mono muted">{p.filename}</span>
            {running && <span className="spinner" aria-hidden="true" />}
          </header>
          <div className="tiles">
            <StatTile label="Lines (traces)" value={<span data-testid="export-lines">{formatInt(p.lines)}</span>} />
            <StatTile label="Bytes" value={formatBytes(p.bytes)} />
            <StatTile label="Elapsed" value={formatMs(p.ms)} />
            <StatTile label="Rate" value={`${formatBytes(rate)}/s`} />
          </div>
          {p.state === 'done' && (
            <div className="ok-msg" role="status">
              {p.savedTo === 'file' ? 'Written to the chosen file.' : `Downloaded as ${p.filename}.`} {p.lines === 0 && 'No trace matched the filters: the file is empty.'}
            </div>
          )}
          {p.state === 'error' && <div className="inline-error" role="alert">{p.error}</div>}
          {p.preview.length > 0 && (
            <>
              <h3 className="subhead">First lines</h3>
              <pre className="json-raw export-preview">{p.preview.map((l) => (l.length > 400 ? `${l.slice(0, 400)}…` : l)).join('\n')}</pre>
            </>
          )}
        </section>
      )}
    </div>
  );
}
