// Shell: header, left nav, and the routed view. Starts live updates once.
import { useEffect, useRef } from 'react';
import { Header } from './components/Header.js';
import { Nav } from './components/Nav.js';
import { useRoute } from './lib/router.js';
import { useEngines } from './store/engines.js';
import { startLiveUpdates } from './store/live.js';
import { BatchView } from './views/BatchView.js';
import { CompareView } from './views/CompareView.js';
import { DashboardView } from './views/DashboardView.js';
import { ExportView } from './views/ExportView.js';
import { LaunchView } from './views/LaunchView.js';
import { ManualView } from './views/ManualView.js';
import { SessionInspector } from './views/SessionInspector.js';
import { SessionsView } from './views/SessionsView.js';
import { TopologyView } from './views/TopologyView.js';

export function App() {
  const route = useRoute();
  const main = useRef<HTMLElement>(null);
  // Every view opens at its top: the scroll position of the previous view means nothing here.
  const viewKey = `${route.view}:${'id' in route ? (route.id ?? '') : ''}`;
  useEffect(() => {
    if (main.current) main.current.scrollTop = 0;
  }, [viewKey]);
  useEffect(() => {
    void useEngines.getState().fetch(); // for SIMULATED labels everywhere
    return startLiveUpdates();
  }, []);
  return (
    <div className="app">
      <Header />
      <div className="app-body">
        <Nav current={route} />
        <main className="app-main" data-view={route.view} ref={main}>
          {route.view === 'dashboard' && <DashboardView />}
          {route.view === 'topology' && <TopologyView />}
          {route.view === 'launch' && <LaunchView />}
          {route.view === 'batch' && <BatchView key={route.id} id={route.id} taskId={route.taskId} q={route.q} />}
          {route.view === 'sessions' && <SessionsView />}
          {route.view === 'session' && <SessionInspector id={route.id} />}
          {route.view === 'compare' && <CompareView a={route.a} b={route.b} task={route.task} />}
          {route.view === 'export' && <ExportView batch={route.batch} />}
          {route.view === 'manual' && <ManualView key={route.id ?? 'new'} id={route.id} />}
        </main>
      </div>
    </div>
  );
}
