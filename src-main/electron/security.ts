// Applies the policy (./policy.ts) to Electron: CSP header on every app response, no permissions
// except clipboard writes, no navigation off the app, no new windows, no <webview>.
import { shell, type Session, type WebContents } from 'electron';
import { isAllowedPermission, isAppUrl, isSafeExternalUrl, withCsp } from './policy.js';

export function secureSession(ses: Session, appOrigin: string): void {
  ses.webRequest.onHeadersReceived((details, callback) => {
    if (!isAppUrl(details.url, appOrigin)) return callback({});
    callback({ responseHeaders: withCsp(details.responseHeaders) });
  });
  ses.setPermissionRequestHandler((_wc, permission, callback) => callback(isAllowedPermission(permission)));
  ses.setPermissionCheckHandler((_wc, permission) => isAllowedPermission(permission));
}

export function secureWebContents(wc: WebContents, appOrigin: string): void {
  wc.setWindowOpenHandler(({ url }) => {
    // Never a new Electron window; a plain web link goes to the OS browser instead.
    if (!isAppUrl(url, appOrigin) && isSafeExternalUrl(url)) void shell.openExternal(url);
    return { action: 'deny' };
  });
  const stayOnApp = (event: { preventDefault(): void }, url: string) => {
    if (!isAppUrl(url, appOrigin)) event.preventDefault();
  };
  wc.on('will-navigate', stayOnApp);
  wc.on('will-redirect', stayOnApp);
  wc.on('will-attach-webview', (event) => event.preventDefault());
}
