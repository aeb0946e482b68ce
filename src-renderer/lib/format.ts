// Small display formatters. Pure.

export function shortId(id: string | null | undefined, n = 8): string {
  if (!id) return '—';
  return id.length > n + 2 ? id.slice(0, n) : id;
}

export function formatInt(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  return Math.round(n).toLocaleString('en-US');
}

export function formatReward(r: number | null | undefined): string {
  if (r === null || r === undefined || !Number.isFinite(r)) return '—';
  return Number.isInteger(r) ? r.toFixed(1) : r.toFixed(3);
}

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)} s`;
  const m = Math.floor(ms / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  return `${m}m ${s}s`;
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** Local date and time, always with the date (a screenshot or a log read tomorrow stays unambiguous): "2026-11-21 14:03:22". */
export function formatTime(epochMs: number | null | undefined): string {
  if (!epochMs || !Number.isFinite(epochMs)) return '—';
  const d = new Date(epochMs);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export function formatLogprob(lp: number | undefined): string {
  if (lp === undefined || !Number.isFinite(lp)) return '—';
  return lp.toFixed(4);
}

export function formatProb(lp: number | undefined): string {
  if (lp === undefined || !Number.isFinite(lp)) return '—';
  const p = Math.exp(lp);
  return p >= 0.001 ? p.toFixed(3) : p.toExponential(1);
}
