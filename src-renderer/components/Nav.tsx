// Left navigation. Add a view by adding an item here and a case in lib/router.ts.
import type { Route } from '../lib/router.js';
import { routeHref } from '../lib/router.js';

interface NavItem { label: string; route: Route; matches: Array<Route['view']>; icon: string }

export const NAV_ITEMS: NavItem[] = [
  { label: 'Dashboard', route: { view: 'dashboard' }, matches: ['dashboard', 'batch'], icon: '▦' },
  { label: 'Launch', route: { view: 'launch' }, matches: ['launch'], icon: '▶' },
  { label: 'Sessions', route: { view: 'sessions' }, matches: ['sessions', 'session'], icon: '☰' },
  { label: 'Compare', route: { view: 'compare' }, matches: ['compare'], icon: '⇄' },
  { label: 'Export', route: { view: 'export' }, matches: ['export'], icon: '⬇' },
  { label: 'Manual session', route: { view: 'manual' }, matches: ['manual'], icon: '⌨' },
  { label: 'Topology', route: { view: 'topology' }, matches: ['topology'], icon: '⚙' },
];

export function Nav({ current }: { current: Route }) {
  return (
    <nav className="app-nav" aria-label="Main">
      <ul>
        {NAV_ITEMS.map((item) => {
          const active = item.matches.includes(current.view);
          return (
            <li key={item.label}>
              <a href={routeHref(item.route)} className={active ? 'active' : ''} aria-current={active ? 'page' : undefined}>
                <span className="nav-icon" aria-hidden="true">
                  {item.icon}
                </span>
                {item.label}
              </a>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
