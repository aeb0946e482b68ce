// Remembered window bounds: a small JSON file in Electron's userData folder. Plain Node (no
// `electron` import) so it can be tested directly.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export interface Rect { x: number; y: number; width: number; height: number }
export interface WindowState { bounds: Partial<Pick<Rect, 'x' | 'y'>> & Pick<Rect, 'width' | 'height'>; maximized: boolean }

export const DEFAULT_WINDOW_STATE: WindowState = { bounds: { width: 1360, height: 880 }, maximized: false };
export const MIN_SIZE = { width: 900, height: 600 };

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Keeps only sane values; anything else falls back to the defaults. */
export function sanitizeWindowState(raw: unknown): WindowState {
  if (!raw || typeof raw !== 'object') return DEFAULT_WINDOW_STATE;
  const r = raw as { bounds?: Partial<Rect>; maximized?: unknown };
  const b = r.bounds ?? {};
  if (!finite(b.width) || !finite(b.height)) return DEFAULT_WINDOW_STATE;
  const bounds: WindowState['bounds'] = {
    width: Math.max(MIN_SIZE.width, Math.round(b.width)),
    height: Math.max(MIN_SIZE.height, Math.round(b.height)),
  };
  if (finite(b.x) && finite(b.y)) {
    bounds.x = Math.round(b.x);
    bounds.y = Math.round(b.y);
  }
  return { bounds, maximized: r.maximized === true };
}

/** Drops the position when the window would not be visible on any of the given work areas. */
export function fitToDisplays(state: WindowState, workAreas: Rect[]): WindowState {
  const { x, y, width, height } = state.bounds;
  if (x === undefined || y === undefined) return state;
  const visible = workAreas.some((a) => {
    const w = Math.min(x + width, a.x + a.width) - Math.max(x, a.x);
    const h = Math.min(y + height, a.y + a.height) - Math.max(y, a.y);
    return w >= 120 && h >= 80;
  });
  return visible ? state : { ...state, bounds: { width, height } };
}

export function readWindowState(file: string): WindowState {
  try {
    return sanitizeWindowState(JSON.parse(readFileSync(file, 'utf8')));
  } catch {
    return DEFAULT_WINDOW_STATE;
  }
}

/** Atomic write (temp file + rename), so a crash never leaves half a file. */
export function writeWindowState(file: string, state: WindowState): void {
  try {
    mkdirSync(dirname(file), { recursive: true });
    const tmp = `${file}.tmp`;
    writeFileSync(tmp, JSON.stringify(state));
    renameSync(tmp, file);
  } catch {
    /* best effort: losing the window position is not worth an error */
  }
}
