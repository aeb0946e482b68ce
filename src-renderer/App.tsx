// Shell: header, left nav, and the routed view. Starts live updates once.
import { useEffect } from 'react';
import { Header } from './components/Header.js';
import { Nav } from './components/Nav.js';
import { useRoute } from './lib/router.js';
import { useEngines } from './store/engines.js';
import { startLiveUpdates } from './store/live.js';
import { EnginesView } from './views/EnginesView.js';
import { SessionInspector } from './views/SessionInspector.js';
import { SessionsView } from './views/SessionsView.js';

export function App() {
  const route = useRoute();
  useEffect(() => {
    void useEngines.getState().fetch(); // for SIMULATED labels everywhere
    return startLiveUpdates();
  }, []);
  return (
    <div className="app">
      <Header />
      <div className="app-body">
        <Nav current={route} />
        <main className="app-main">
          {route.view === 'engines' && <EnginesView />}
          {route.view === 'sessions' && <SessionsView />}
          {route.view === 'session' && <SessionInspector id={route.id} />}
        </main>
      </div>
    </div>
  );
}
