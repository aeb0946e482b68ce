// Launch: dataset (demo, a path on the server, or a JSONL file picked here and sent as tasks) ×
// harness × engine × samples per task × concurrency → POST /api/batches; then live progress of the
// launched batches (and any other running batch).
import { useEffect, useMemo, useState, type FormEvent } from 'react';
import { create } from 'zustand';
import { api } from '../backend/client.js';
import type { BatchSubmit, RuntimeChoice, RuntimesInfo } from '../backend/types.js';
import { StatusBadge } from '../components/Badges.js';
import { HarnessSelect } from '../components/HarnessSelect.js';
import { Empty, ErrorState, Loading } from '../components/States.js';
import { ProgressBar } from '../components/Widgets.js';
import { batchLabel, batchName } from '../lib/batch.js';
import { formatReward } from '../lib/format.js';
import { routeHref } from '../lib/router.js';
import { isActive, useBatches } from '../store/batches.js';
import { useCatalog } from '../store/catalog.js';
import { useEngines } from '../store/engines.js';
import { errorText } from '../store/resource.js';

type Source = 'demo' | 'path' | 'file';

/** Launched from this window (kept across navigation), newest first. */
const useLaunched = create<{ ids: string[]; add(id: string): void }>((set, get) => ({
  ids: [],
  add: (id) => set({ ids: [id, ...get().ids.filter((x) => x !== id)] }),
}));

interface ParsedFile { name: string; tasks: unknown[]; problems: string[] }

export function parseJsonl(name: string, text: string): ParsedFile {
  const tasks: unknown[] = [];
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (!line.trim()) return;
    try {
      tasks.push(JSON.parse(line));
    } catch (e) {
      problems.push(`line ${i + 1}: ${(e as Error).message}`);
    }
  });
  if (tasks.length === 0 && problems.length === 0) problems.push('the file has no tasks');
  return { name, tasks, problems };
}

function LaunchedBatch({ id }: { id: string }) {
  const b = useBatches((s) => s.data?.find((x) => x.id === id));
  const phase = useBatches((s) => s.phases[id]);
  if (!b) return <div className="launched muted" data-batch-id={id}>{id}: waiting for the first update…</div>;
  return (
    <div className="launched" data-batch-id={id} data-status={b.status}>
      <a className="mono" href={routeHref({ view: 'batch', id })}>
        {batchName(b)}
      </a>
      <StatusBadge status={b.status} />
      <span className="muted ellipsis">{batchLabel(b)}</span>
      <ProgressBar counts={b.counts} />
      <span className="mono launched-reward" title="mean reward so far">
        {formatReward(b.meanReward)}
      </span>
      {phase && isActive(b.status) && <span className="chip">{phase.message ?? phase.phase}</span>}
    </div>
  );
}

export function LaunchView() {
  const catalog = useCatalog();
  const engines = useEngines();
  const batches = useBatches();
  const launched = useLaunched();

  const [source, setSource] = useState<Source>('demo');
  const [demo, setDemo] = useState('');
  const [path, setPath] = useState('');
  const [file, setFile] = useState<ParsedFile | null>(null);
  const [harness, setHarness] = useState('builtin');
  const [command, setCommand] = useState('');
  const [engine, setEngine] = useState('');
  const [n, setN] = useState(4);
  const [concurrency, setConcurrency] = useState(4);
  const [name, setName] = useState('');
  const [runtime, setRuntime] = useState<RuntimeChoice>('auto');
  const [runtimes, setRuntimes] = useState<RuntimesInfo | null>(null);
  const [warning, setWarning] = useState<string | null>(null);
  const [submitting, setSubmitting] = useState(false);
  const [error, setError] = useState<{ message: string } | null>(null);

  useEffect(() => {
    api.runtimes().then(setRuntimes, () => setRuntimes(null));
    void catalog.load();
    if (!engines.data) void engines.fetch();
    if (!batches.data) void batches.fetch();
  }, []);
  useEffect(() => {
    if (!demo && catalog.datasets?.length) setDemo(catalog.datasets.find((d) => d.name === 'demo:calculator')?.name ?? catalog.datasets[0].name);
  }, [catalog.datasets]);
  useEffect(() => {
    if (!engine && engines.data?.length) setEngine(engines.data[0].id);
  }, [engines.data]);

  const h = catalog.harnesses?.find((x) => x.name === harness);
  const running = useMemo(() => (batches.data ?? []).filter((b) => isActive(b.status) && !launched.ids.includes(b.id)), [batches.data, launched.ids]);

  const datasetReady = source === 'demo' ? !!demo : source === 'path' ? path.trim().length > 0 : !!file && file.problems.length === 0;
  const valid = datasetReady && !!harness && !!engine && n >= 1 && concurrency >= 1 && (h?.kind !== 'command' || command.trim().length > 0);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!valid || submitting) return;
    setSubmitting(true);
    setError(null);
    const body: BatchSubmit = { harness, engine, n, concurrency };
    if (source === 'demo') body.dataset = demo;
    else if (source === 'path') body.dataset = path.trim();
    else body.tasks = file!.tasks;
    if (name.trim()) body.name = name.trim();
    if (h?.kind === 'command') body.command = command.trim();
    if (runtime !== 'auto') body.runtime = runtime;
    try {
      const { id, warning: unsandboxed } = await api.submitBatch(body);
      setWarning(unsandboxed ?? null);
      launched.add(id);
      await batches.fetch({ quiet: true });
    } catch (err) {
      setError({ message: errorText(err) });
    } finally {
      setSubmitting(false);
    }
  };

  const onFile = async (f: File | undefined) => {
    if (!f) return setFile(null);
    setFile(parseJsonl(f.name, await f.text()));
  };

  const catalogBusy = catalog.loading && !catalog.harnesses;
  return (
    <div className="view">
      <div className="view-head">
        <h1>Launch a batch</h1>
      </div>
      {catalogBusy ? (
        <Loading label="Loading harnesses and datasets…" />
      ) : (
        <form className="card form" onSubmit={(e) => void submit(e)} aria-label="Batch spec">
          <fieldset className="field">
            <legend>Dataset</legend>
            <div className="seg" role="group" aria-label="Dataset source">
              {(['demo', 'path', 'file'] as Source[]).map((s) => (
                <button key={s} type="button" className={source === s ? 'on' : ''} aria-pressed={source === s} onClick={() => setSource(s)}>
                  {s === 'demo' ? 'Demo' : s === 'path' ? 'Path on the server' : 'JSONL file…'}
                </button>
              ))}
            </div>
            {source === 'demo' &&
              (catalog.datasetError ? (
                <span className="inline-error" role="alert">Demo datasets unavailable: {catalog.datasetError}</span>
              ) : (
                <select className="input" aria-label="Demo dataset" value={demo} onChange={(e) => setDemo(e.target.value)}>
                  {(catalog.datasets ?? []).map((d) => (
                    <option key={d.name} value={d.name} disabled={!!d.error}>
                      {d.name} — {d.tasks} tasks{d.error ? ` (broken: ${d.error})` : ''}
                    </option>
                  ))}
                </select>
              ))}
            {source === 'path' && (
              <input className="input input-wide" aria-label="Dataset path" placeholder="/data/tasks.jsonl or a Harbor task folder (read by the server)" value={path} onChange={(e) => setPath(e.target.value)} />
            )}
            {source === 'file' && (
              <span className="file-pick">
                <input type="file" accept=".jsonl,.json,.ndjson,application/x-ndjson" aria-label="Dataset file" onChange={(e) => void onFile(e.target.files?.[0])} />
                {file && file.problems.length === 0 && (
                  <span className="muted">
                    {file.name}: {file.tasks.length} tasks (sent inline)
                  </span>
                )}
                {file && file.problems.length > 0 && (
                  <span className="inline-error" role="alert">
                    {file.name}: {file.problems.slice(0, 3).join('; ')}
                  </span>
                )}
              </span>
            )}
          </fieldset>
          <label className="field">
            <span className="field-label">Harness</span>
            <HarnessSelect value={harness} onChange={setHarness} />
            {h && (
              <span className="field-hint">
                {h.description}
                {h.agent ? ` · installs ${h.agent.package}@${h.agent.version} on first use` : ''}
              </span>
            )}
          </label>
          {h?.kind === 'command' && (
            <label className="field">
              <span className="field-label">Command</span>
              <input className="input input-wide mono" aria-label="Command" placeholder="my-agent --base-url {{OPENAI_BASE_URL}} {{PROMPT}}" value={command} onChange={(e) => setCommand(e.target.value)} />
            </label>
          )}
          <label className="field">
            <span className="field-label">Engine</span>
            {engines.error && !engines.data ? (
              <span className="inline-error" role="alert">Engines unavailable: {engines.error}</span>
            ) : (
              <select className="input" aria-label="Engine" value={engine} onChange={(e) => setEngine(e.target.value)}>
                {(engines.data ?? []).map((x) => (
                  <option key={x.id} value={x.id}>
                    {x.id} — {x.kind} {x.mode}
                    {x.simulated ? ' (SIMULATED)' : ''}
                    {x.paused ? ' (paused)' : ''}
                  </option>
                ))}
              </select>
            )}
          </label>
          <label className="field">
            <span className="field-label">Runtime</span>
            <select className="input" aria-label="Runtime" value={runtime} onChange={(e) => setRuntime(e.target.value as RuntimeChoice)}>
              <option value="auto">auto{runtimes?.resolved ? ` (${runtimes.resolved}${runtimes.resolved === 'local' ? ', UNSANDBOXED' : ''})` : ''}</option>
              {(runtimes?.runtimes ?? []).map((r) => (
                <option key={r.name} value={r.name} disabled={!r.available}>
                  {r.name}
                  {r.name === 'local' ? ' (unsandboxed)' : ''}
                  {r.available ? '' : ' — not available'}
                </option>
              ))}
            </select>
            <span className="field-hint">
              {runtime === 'local' || (runtime === 'auto' && runtimes?.resolved === 'local')
                ? 'Agents run as plain processes: they can reach the control API, other sessions and your files, so rewards are not protected.'
                : 'bwrap and docker sandboxes reach only their own session; grading runs after the agent, out of its reach.'}
            </span>
          </label>
          <div className="field-row">
            <label className="field">
              <span className="field-label">Samples per task</span>
              <input className="input input-narrow" type="number" min={1} max={10000} aria-label="Samples per task" value={n} onChange={(e) => setN(Math.max(1, Number(e.target.value) || 1))} />
            </label>
            <label className="field">
              <span className="field-label">Concurrency</span>
              <input className="input input-narrow" type="number" min={1} max={1024} aria-label="Concurrency" value={concurrency} onChange={(e) => setConcurrency(Math.max(1, Number(e.target.value) || 1))} />
            </label>
            <label className="field">
              <span className="field-label">Name (optional)</span>
              <input className="input" aria-label="Batch name" value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. calc on vLLM" />
            </label>
          </div>
          <div className="form-actions">
            <button type="submit" className="btn btn-primary" disabled={!valid || submitting}>
              {submitting ? 'Launching…' : '▶ Launch'}
            </button>
            {error && (
              <div className="inline-error form-error" role="alert">
                <strong>Launch failed:</strong> <span className="pre">{error.message}</span>
              </div>
            )}
            {warning && (
              <div className="inline-error form-error" role="status" data-testid="runtime-warning">
                <span className="badge badge-warn">unsandboxed</span> {warning}
              </div>
            )}
          </div>
        </form>
      )}
      <h2 className="subhead">Launched from here</h2>
      {launched.ids.length === 0 ? (
        <Empty title="Nothing launched yet">Launched batches show their progress here; the dashboard lists every batch.</Empty>
      ) : (
        <div className="launched-list" data-testid="launched">
          {launched.ids.map((id) => (
            <LaunchedBatch key={id} id={id} />
          ))}
        </div>
      )}
      {running.length > 0 && (
        <>
          <h2 className="subhead">Other running batches</h2>
          <div className="launched-list">
            {running.map((b) => (
              <LaunchedBatch key={b.id} id={b.id} />
            ))}
          </div>
        </>
      )}
      {batches.error && !batches.data && <ErrorState message={batches.error} onRetry={() => void batches.fetch()} />}
    </div>
  );
}

