// The harness picker shared by Launch and Manual session: the server's harness list, or why it is missing.
import { useCatalog } from '../store/catalog.js';

/** `agentsOnly` leaves out the reference harnesses (oracle, nop), which run only in batches. */
export function HarnessSelect({ value, onChange, agentsOnly = false }: { value: string; onChange(name: string): void; agentsOnly?: boolean }) {
  const catalog = useCatalog();
  if (catalog.harnessError) return <span className="inline-error" role="alert">Harness list unavailable: {catalog.harnessError}</span>;
  return (
    <select className="input" aria-label="Harness" value={value} onChange={(e) => onChange(e.target.value)}>
      {(catalog.harnesses ?? []).filter((x) => !agentsOnly || x.kind !== 'reference').map((x) => (
        <option key={x.name} value={x.name}>
          {x.name} ({x.dialect})
        </option>
      ))}
    </select>
  );
}
