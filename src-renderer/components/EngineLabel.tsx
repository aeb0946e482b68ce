// An engine id, with the SIMULATED badge when that engine is simulated.
import { useIsSimulated } from '../store/engines.js';
import { SimulatedBadge } from './Badges.js';

export function EngineLabel({ id }: { id: string | null | undefined }) {
  const sim = useIsSimulated(id);
  if (!id) return <span className="muted">—</span>;
  return (
    <span className="engine-label">
      <span className="mono">{id}</span>
      {sim && <SimulatedBadge />}
    </span>
  );
}
