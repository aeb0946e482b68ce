// The harness picker shared by Launch and Manual session: the server's harness list, or why it is missing.
import { useCatalog } from '../store/catalog.js';

export function HarnessSelect({ value, onChange }: { value: string; onChange(name: string): void }) {
  const catalog = useCatalog();
  if (catalog.harnessError) return <span className="inline-error" role="alert">Harness list unavailable: {catalog.harnessError}</span>;
  return (
    <select className="input" aria-label="Harness" value={value} onChange={(e) => onChange(e.target.value)}>
      {(catalog.harnesses ?? []).map((x) => (
        <option key={x.name} value={x.name}>
          {x.name} ({x.dialect})
        </option>
      ))}
    </select>
  );
}
