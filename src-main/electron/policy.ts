// Security policy for the desktop window, as pure functions (no `electron` import, unit-testable):
// the CSP, what counts as "the app", and which external links may be handed to the OS browser.

/** Strict CSP: no inline script or style, no eval, only the app's own origin. */
export const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-src 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

/** True when `url` is on the app's own origin (scheme, host and port all equal). */
export function isAppUrl(url: string, appOrigin: string): boolean {
  const o = originOf(url);
  return o !== null && o !== 'null' && o === appOrigin;
}

/** Links the OS browser may open on the user's click: plain http(s) only, never file:, javascript: … */
export function isSafeExternalUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}

/** Response headers with the app's CSP set (replacing any CSP the server sent, case-insensitively). */
export function withCsp(headers: Record<string, string[] | string> | undefined): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(headers ?? {})) {
    if (k.toLowerCase() === 'content-security-policy') continue;
    out[k] = Array.isArray(v) ? v : [v];
  }
  out['Content-Security-Policy'] = [CSP];
  return out;
}

/**
 * Permissions the renderer may get: writing to the clipboard (the JSON "Copy" buttons) and the File System
 * Access save dialog (Export → "Save as…" streams into the file the user picks there).
 */
export function isAllowedPermission(permission: string): boolean {
  return permission === 'clipboard-sanitized-write' || permission === 'fileSystem';
}
