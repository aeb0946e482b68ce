// Chart helpers shared by the views: theme colours read from the CSS variables (so recharts' SVG
// attributes follow the dark/light theme), a sized frame with a title, and a themed tooltip.
import { useMemo, type ReactNode } from 'react';
import { engineColorIndex } from '../lib/engineColor.js';
import { useEngines } from '../store/engines.js';
import { useUi } from '../store/ui.js';

export interface ChartColors {
  fg: string;
  muted: string;
  grid: string;
  bg: string;
  accent: string;
  good: string;
  bad: string;
  warn: string;
  info: string;
  sim: string;
  /** Distinct series colours (batch A, batch B, …). */
  series: string[];
}

function cssVar(name: string, fallback: string): string {
  if (typeof document === 'undefined') return fallback;
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

export function useChartColors(): ChartColors {
  const theme = useUi((s) => s.theme);
  return useMemo(() => {
    const accent = cssVar('--accent', '#5aa9ff');
    const warn = cssVar('--warn', '#d29922');
    const sim = cssVar('--sim', '#c297ff');
    const good = cssVar('--good', '#3fb950');
    return {
      fg: cssVar('--fg', '#e4e7ec'),
      muted: cssVar('--fg-muted', '#8b94a5'),
      grid: cssVar('--border', '#2a303c'),
      bg: cssVar('--bg-elev', '#161a21'),
      accent,
      good,
      bad: cssVar('--bad', '#f85149'),
      warn,
      info: cssVar('--info', '#58a6ff'),
      sim,
      series: [accent, warn, sim, good, '#e36fa8', '#4fc1c9'],
    };
    // theme is the dependency: the variables change with it
  }, [theme]);
}

export function axisProps(c: ChartColors) {
  return {
    stroke: c.grid,
    tick: { fill: c.muted, fontSize: 11 },
    tickLine: { stroke: c.grid },
  };
}

export function tooltipProps(c: ChartColors) {
  return {
    contentStyle: { background: c.bg, border: `1px solid ${c.grid}`, borderRadius: 6, fontSize: 12, color: c.fg },
    labelStyle: { color: c.fg, fontWeight: 600 },
    itemStyle: { color: c.fg },
    cursor: { fill: c.grid, fillOpacity: 0.35 },
  };
}

export function ChartCard({ title, subtitle, children, testId, actions }: { title: string; subtitle?: ReactNode; children: ReactNode; testId?: string; actions?: ReactNode }) {
  return (
    <section className="card chart-card" data-testid={testId} aria-label={title}>
      <header className="card-head">
        <h2>{title}</h2>
        {subtitle && <span className="muted chart-sub">{subtitle}</span>}
        <span className="spacer" />
        {actions}
      </header>
      <div className="chart-body">{children}</div>
    </section>
  );
}

/** The colour of an engine, the same in every chart (see lib/engineColor.ts). */
export function useEngineColor(): (engineId: string | null | undefined) => string {
  const c = useChartColors();
  const ids = useEngines((s) => s.data?.map((e) => e.id).join('\n') ?? '');
  return useMemo(() => {
    const known = ids ? ids.split('\n') : [];
    return (id) => c.series[engineColorIndex(id, known, c.series.length)];
  }, [c, ids]);
}

/** A legend of engine colours. */
export function EngineLegend({ engines }: { engines: Array<string | null | undefined> }) {
  const color = useEngineColor();
  const ids = [...new Set(engines.map((e) => e ?? '?'))];
  return (
    <span className="legend-inline">
      {ids.map((e) => (
        <span key={e} className="legend-item" data-engine={e}>
          <span className="swatch" style={{ background: color(e) }} /> {e}
        </span>
      ))}
    </span>
  );
}
