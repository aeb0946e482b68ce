// Batch callbacks: POST the result JSON to the trainer's callbackUrl, retried with exponential backoff
// (bounded attempts) until a 2xx answer.

export interface CallbackOptions {
  /** Total attempts, first included. Default 6. */
  maxAttempts?: number;
  /** Delay before the 2nd attempt; doubles each time (±20% jitter), capped at maxDelayMs. Default 1000. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Per-attempt time limit. Default 15 s. */
  timeoutMs?: number;
  signal?: AbortSignal;
  onAttempt?: (attempt: number, error: string | null) => void;
}

export interface CallbackResult { ok: boolean; attempts: number; lastError: string | null }

const sleep = (ms: number, signal?: AbortSignal) => new Promise<void>((resolve) => {
  const t = setTimeout(done, ms);
  function done() { clearTimeout(t); signal?.removeEventListener('abort', done); resolve(); }
  signal?.addEventListener('abort', done, { once: true });
});

export async function deliverCallback(url: string, body: unknown, opts: CallbackOptions = {}): Promise<CallbackResult> {
  const maxAttempts = Math.max(1, opts.maxAttempts ?? 6);
  const base = opts.baseDelayMs ?? 1000;
  const payload = JSON.stringify(body);
  let lastError: string | null = null;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    if (opts.signal?.aborted) return { ok: false, attempts: attempt - 1, lastError: lastError ?? 'aborted' };
    try {
      const signal = opts.signal ? AbortSignal.any([opts.signal, AbortSignal.timeout(opts.timeoutMs ?? 15_000)]) : AbortSignal.timeout(opts.timeoutMs ?? 15_000);
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'rollgate-callback/1', 'x-rollgate-attempt': String(attempt) },
        body: payload,
        signal,
      });
      await res.arrayBuffer().catch(() => undefined);
      if (res.ok) {
        opts.onAttempt?.(attempt, null);
        return { ok: true, attempts: attempt, lastError: null };
      }
      lastError = `HTTP ${res.status}`;
    } catch (e) {
      const err = e as Error & { cause?: { code?: string; message?: string } };
      lastError = err.cause?.code ?? err.cause?.message ?? err.message;
    }
    opts.onAttempt?.(attempt, lastError);
    if (attempt < maxAttempts) {
      const delay = Math.min(opts.maxDelayMs ?? 60_000, base * 2 ** (attempt - 1)) * (0.8 + Math.random() * 0.4);
      await sleep(delay, opts.signal);
    }
  }
  return { ok: false, attempts: maxAttempts, lastError };
}
