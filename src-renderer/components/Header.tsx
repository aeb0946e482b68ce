// App header: name, the global state strip, live-connection indicator, theme toggle.
import { useConnection } from '../store/live.js';
import { useUi } from '../store/ui.js';
import { StatusStrip } from './StatusStrip.js';

const connLabel = { open: 'live', connecting: 'connecting…', closed: 'offline' } as const;

export function Header() {
  const theme = useUi((s) => s.theme);
  const toggle = useUi((s) => s.toggleTheme);
  const conn = useConnection((s) => s.state);
  return (
    <header className="app-header">
      <a className="brand" href="#/">
        <img src="./favicon.svg" alt="" width={22} height={22} />
        <span>Rollgate</span>
      </a>
      <StatusStrip />
      <span className="spacer" />
      <span className={`conn conn-${conn}`} title="Live updates from /api/events">
        <span className="dot" aria-hidden="true" /> {connLabel[conn]}
      </span>
      <button
        type="button"
        className="btn btn-ghost"
        onClick={toggle}
        aria-label={`Switch to ${theme === 'dark' ? 'light' : 'dark'} theme`}
        title={`Switch to ${theme === 'dark' ? 'light' : 'dark'} theme`}
      >
        {theme === 'dark' ? '☀ Light' : '☾ Dark'}
      </button>
    </header>
  );
}
