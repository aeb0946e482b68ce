// Secret-looking fields are removed from agent requests before they are stored (DESIGN §3: "request as received
// (secrets removed)"). Agents and SDKs sometimes echo credentials into the body (`api_key`, `apiKey`, an
// `authorization` header object); a stored completion is exported, shown in the UI and shared.
const SECRET_FIELD = /^(api[-_]?key|authorization|proxy[-_]?authorization|x[-_]api[-_]key|x[-_]goog[-_]api[-_]key)$/i;
export const REDACTED = '[redacted]';

/** `value` with every secret-looking field's value replaced; unchanged parts are shared, not copied. */
export function redactSecrets<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    value.forEach((item, i) => {
      const r = redactSecrets(item);
      if (r !== item) (out ??= [...value])[i] = r;
    });
    return (out ?? value) as T;
  }
  let out: Record<string, unknown> | null = null;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const r = SECRET_FIELD.test(k) && v !== null && v !== undefined && v !== '' ? REDACTED : redactSecrets(v);
    if (r !== v) (out ??= { ...(value as Record<string, unknown>) })[k] = r;
  }
  return (out ?? value) as T;
}
