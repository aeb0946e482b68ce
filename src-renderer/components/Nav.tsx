// Left navigation. Add views (Dashboard, Launch, Compare, Export) by adding items here and a case
// in lib/router.ts.
import type { Route } from '../lib/router.js';
import { routeHref } from '../lib/router.js';

interface NavItem { label: string; route: Route; matches: Array<Route['view']>; icon: string }

export const NAV_ITEMS: NavItem[] = [
  { label: 'Sessions', route: { view: 'sessions' }, matches: ['sessions', 'session'], icon: '☰' },
  { label: 'Engines', route: { view: 'engines' }, matches: ['engines'], icon: '⚙' },
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
