// Collapsible pretty JSON. Children render only when a node is open; long strings and arrays are
// cut with a "show more" control, so multi-megabyte requests stay responsive.
import { useState } from 'react';

const STRING_LIMIT = 600;
const ARRAY_PAGE = 100;
const LONG_ARRAY = 50;

function Str({ value }: { value: string }) {
  const [full, setFull] = useState(false);
  const text = JSON.stringify(value);
  if (full || text.length <= STRING_LIMIT) return <span className="j-str">{text}</span>;
  return (
    <>
      <span className="j-str">{text.slice(0, STRING_LIMIT)}…</span>{' '}
      <button type="button" className="link" onClick={() => setFull(true)}>
        show all {value.length.toLocaleString('en-US')} chars
      </button>
    </>
  );
}

function Leaf({ value }: { value: unknown }) {
  if (value === null) return <span className="j-null">null</span>;
  switch (typeof value) {
    case 'string':
      return <Str value={value} />;
    case 'number':
      return <span className="j-num">{String(value)}</span>;
    case 'boolean':
      return <span className="j-bool">{String(value)}</span>;
    default:
      return <span className="j-null">{String(value)}</span>;
  }
}

interface NodeProps {
  name?: string | number;
  value: unknown;
  depth: number;
  openDepth: number;
}

function Key({ name }: { name?: string | number }) {
  if (name === undefined) return null;
  return <span className="j-key">{typeof name === 'number' ? name : JSON.stringify(name)}: </span>;
}

function JsonNode({ name, value, depth, openDepth }: NodeProps) {
  const isObj = value !== null && typeof value === 'object';
  // Open the first levels, but keep long arrays (token ids, big histories) folded.
  const [open, setOpen] = useState(
    () => depth < openDepth && !(Array.isArray(value) && value.length > LONG_ARRAY && depth > 0),
  );
  const [shown, setShown] = useState(ARRAY_PAGE);
  if (!isObj) {
    return (
      <div className="j-line">
        <Key name={name} />
        <Leaf value={value} />
      </div>
    );
  }
  const isArr = Array.isArray(value);
  const entries: Array<[string | number, unknown]> = isArr
    ? (value as unknown[]).map((v, i) => [i, v])
    : Object.entries(value as Record<string, unknown>);
  const [lb, rb] = isArr ? ['[', ']'] : ['{', '}'];
  const summary = isArr ? `${entries.length} items` : `${entries.length} keys`;
  if (entries.length === 0) {
    return (
      <div className="j-line">
        <Key name={name} />
        <span className="j-punct">{lb + rb}</span>
      </div>
    );
  }
  return (
    <div className="j-node">
      <button type="button" className="j-toggle" aria-expanded={open} onClick={() => setOpen(!open)}>
        <span className="j-caret">{open ? '▾' : '▸'}</span>
        <Key name={name} />
        <span className="j-punct">{lb}</span>
        {!open && (
          <>
            <span className="j-summary"> {summary} </span>
            <span className="j-punct">{rb}</span>
          </>
        )}
      </button>
      {open && (
        <div className="j-children">
          {entries.slice(0, shown).map(([k, v]) => (
            <JsonNode key={k} name={k} value={v} depth={depth + 1} openDepth={openDepth} />
          ))}
          {entries.length > shown && (
            <button type="button" className="link j-more" onClick={() => setShown(shown + ARRAY_PAGE * 10)}>
              show {Math.min(entries.length - shown, ARRAY_PAGE * 10).toLocaleString('en-US')} more of{' '}
              {(entries.length - shown).toLocaleString('en-US')}
            </button>
          )}
        </div>
      )}
      {open && <div className="j-punct j-close">{rb}</div>}
    </div>
  );
}

export function JsonTree({ value, openDepth = 4 }: { value: unknown; openDepth?: number }) {
  return (
    <div className="json">
      <JsonNode value={value} depth={0} openDepth={openDepth} />
    </div>
  );
}
