// The Electron shell without an Electron binary (none can be downloaded here): bundle
// src-main/electron/main.ts with scripts/build-electron.mjs, run the bundle in Node with a stand-in
// `electron` module that records what main.ts asks of it, then check the security settings, the CSP
// hook, navigation/new-window blocking, the served UI (in Chromium) and a clean quit.
import { expect, test } from '@playwright/test';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

// A minimal `electron` for Node: enough of app/BrowserWindow/session/Menu/shell for main.ts, with
// every call reported on stdout as `FAKE <json>`. After the window loads, it probes the hooks.
const FAKE_ELECTRON = String.raw`
const { EventEmitter } = require('node:events');
const report = (ev) => process.stdout.write('FAKE ' + JSON.stringify(ev) + '\n');
const hooks = {};
const windows = [];
const app = new EventEmitter();
let quitting = false;
Object.assign(app, {
  isPackaged: false,
  getAppPath: () => process.env.FAKE_APP_PATH,
  getPath: () => process.env.FAKE_USER_DATA,
  getVersion: () => '0.0.0-test',
  requestSingleInstanceLock: () => true,
  whenReady: () => Promise.resolve(),
  exit: (code) => { report({ type: 'exit', code }); process.exit(code); },
  quit() {
    const e = { prevented: false, preventDefault() { this.prevented = true; } };
    app.emit('before-quit', e);
    if (e.prevented) return report({ type: 'quit-deferred' });
    for (const w of windows) w.emit('close', {});
    report({ type: 'quit' });
    process.exit(0);
  },
});
process.on('SIGTERM', () => app.quit());
class WebContents extends EventEmitter {
  setWindowOpenHandler(h) { hooks.open = h; }
  loadURL(url) { report({ type: 'webContents.loadURL', url }); return Promise.resolve(); }
}
class BrowserWindow extends EventEmitter {
  constructor(options) {
    super();
    this.options = options;
    this.webContents = new WebContents();
    windows.push(this);
    report({ type: 'window', options });
  }
  loadURL(url) {
    report({ type: 'loadURL', url });
    setTimeout(() => probe(this, url), 10);
    return Promise.resolve();
  }
  once(ev, fn) { super.once(ev, fn); if (ev === 'ready-to-show') setTimeout(() => this.emit('ready-to-show'), 5); return this; }
  show() { this.visible = true; report({ type: 'show' }); }
  isVisible() { return !!this.visible; }
  isDestroyed() { return false; }
  isMaximized() { return false; }
  isFullScreen() { return false; }
  isMinimized() { return false; }
  getBounds() { return { x: 40, y: 30, width: this.options.width, height: this.options.height }; }
  getNormalBounds() { return this.getBounds(); }
  maximize() {} restore() {} focus() {}
}
function probe(win, url) {
  const origin = new URL(url).origin;
  const result = {};
  hooks.headers({ url: origin + '/', responseHeaders: { 'content-security-policy': ["default-src *"], 'Content-Type': ['text/html'] } },
    (r) => { result.appHeaders = r.responseHeaders; });
  hooks.headers({ url: 'https://example.com/', responseHeaders: {} }, (r) => { result.otherHeaders = r; });
  const nav = (to) => { const e = { prevented: false, preventDefault() { this.prevented = true; } }; win.webContents.emit('will-navigate', e, to); return e.prevented; };
  result.navOff = nav('https://example.com/');
  result.navApp = nav(origin + '/#/engines');
  result.openWeb = hooks.open({ url: 'https://example.com/docs' });
  result.openFile = hooks.open({ url: 'file:///etc/passwd' });
  let granted = null;
  hooks.perm(null, 'media', (ok) => { granted = ok; });
  result.permMedia = granted;
  hooks.perm(null, 'clipboard-sanitized-write', (ok) => { granted = ok; });
  result.permClipboard = granted;
  const webview = { prevented: false, preventDefault() { this.prevented = true; } };
  win.webContents.emit('will-attach-webview', webview);
  result.webviewBlocked = webview.prevented;
  report({ type: 'probe', result });
}
module.exports = {
  app,
  BrowserWindow,
  session: { defaultSession: {
    webRequest: { onHeadersReceived(fn) { hooks.headers = fn; } },
    setPermissionRequestHandler(fn) { hooks.perm = fn; },
    setPermissionCheckHandler(fn) { hooks.permCheck = fn; },
  } },
  Menu: {
    buildFromTemplate: (template) => ({ template }),
    setApplicationMenu: (m) => report({ type: 'menu', items: m.template.map((i) => i.label || i.role) }),
  },
  screen: { getAllDisplays: () => [{ workArea: { x: 0, y: 0, width: 1920, height: 1080 } }] },
  shell: { openExternal: async (url) => report({ type: 'openExternal', url }), openPath: async () => '' },
  dialog: { showErrorBox: (title, message) => report({ type: 'errorBox', title, message }), showMessageBox: async () => ({}) },
  clipboard: { writeText() {} },
};
`;

const HOOK = String.raw`
const Module = require('node:module');
const fake = require('node:path').join(__dirname, 'fake-electron.cjs');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request === 'electron' ? fake : resolve.call(this, request, ...rest);
};
`;

interface FakeEvent { type: string; [k: string]: unknown }

let proc: ChildProcess | null = null;
let work = '';
const events: FakeEvent[] = [];
let output = '';

function waitFor(type: string, timeoutMs = 90_000): Promise<FakeEvent> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const tick = () => {
      const ev = events.find((e) => e.type === type);
      if (ev) return resolve(ev);
      if (proc?.exitCode !== null && proc?.exitCode !== undefined) return reject(new Error(`main exited (${proc.exitCode}) before ${type}:\n${output}`));
      if (Date.now() - started > timeoutMs) return reject(new Error(`no ${type} in ${timeoutMs} ms:\n${output}`));
      setTimeout(tick, 50);
    };
    tick();
  });
}

test.describe.configure({ mode: 'serial' });

test.beforeAll(async () => {
  test.setTimeout(150_000);
  work = mkdtempSync(join(tmpdir(), 'rollgate-shell-'));
  const bundle = process.env.ELECTRON_MAIN_BUNDLE ?? join(root, 'dist-electron', 'main.cjs');
  if (!process.env.ELECTRON_MAIN_BUNDLE) execFileSync(process.execPath, [join(root, 'scripts', 'build-electron.mjs')], { cwd: root, stdio: 'pipe' });
  writeFileSync(join(work, 'fake-electron.cjs'), FAKE_ELECTRON);
  writeFileSync(join(work, 'hook.cjs'), HOOK);
  proc = spawn(process.execPath, ['--require', join(work, 'hook.cjs'), bundle, '--port', '0', '--data-dir', join(work, 'data')], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FAKE_APP_PATH: process.env.FAKE_APP_PATH ?? root, FAKE_USER_DATA: join(work, 'user-data') },
  });
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    for (const line of chunk.toString().split('\n')) {
      if (line.startsWith('FAKE ')) events.push(JSON.parse(line.slice(5)) as FakeEvent);
    }
  };
  proc.stdout!.on('data', onData);
  proc.stderr!.on('data', onData);
  await waitFor('probe');
});

test.afterAll(async () => {
  if (proc && proc.exitCode === null) {
    proc.kill('SIGKILL');
  }
  if (work) rmSync(work, { recursive: true, force: true });
});

test('window is sandboxed, CSP is enforced, navigation and new windows are blocked', async () => {
  const win = events.find((e) => e.type === 'window') as { options: { webPreferences: Record<string, unknown> } } & FakeEvent;
  expect(win.options.webPreferences).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false, webSecurity: true });
  expect(events.some((e) => e.type === 'errorBox')).toBe(false);
  const menu = events.find((e) => e.type === 'menu') as { items: string[] } & FakeEvent;
  expect(menu.items).toEqual(expect.arrayContaining(['&File', '&View', 'help']));

  const { result } = (await waitFor('probe')) as { result: Record<string, unknown> } & FakeEvent;
  const headers = result.appHeaders as Record<string, string[]>;
  expect(headers['Content-Security-Policy'][0]).toContain("script-src 'self'");
  expect(headers['Content-Security-Policy'][0]).not.toContain('unsafe');
  expect(Object.keys(headers).filter((k) => k.toLowerCase() === 'content-security-policy')).toHaveLength(1);
  expect(headers['Content-Type']).toEqual(['text/html']);
  expect(result.otherHeaders).toEqual({});
  expect(result.navOff).toBe(true);
  expect(result.navApp).toBe(false);
  expect(result.openWeb).toEqual({ action: 'deny' });
  expect(result.openFile).toEqual({ action: 'deny' });
  expect(events.filter((e) => e.type === 'openExternal').map((e) => e.url)).toEqual(['https://example.com/docs']);
  expect(result.permMedia).toBe(false);
  expect(result.permClipboard).toBe(true);
  expect(result.webviewBlocked).toBe(true);
});

test('the window loads the UI served by the in-process server', async ({ page }, info) => {
  const { url } = (await waitFor('loadURL')) as { url: string } & FakeEvent;
  expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/?$/);
  const health = await fetch(new URL('/api/health', url));
  expect(health.ok).toBe(true);
  await page.goto(url);
  await expect(page.locator('.brand')).toContainText('Rollgate');
  await expect(page.getByRole('heading', { name: 'Dashboard' })).toBeVisible(); // the landing view
  await page.goto(new URL('/#/engines', url).href);
  await expect(page.locator('[data-engine-id="sim-vllm"] .badge-sim')).toBeVisible();
  await page.screenshot({ path: info.outputPath('shell-engines.png') });
});

test('quitting closes the server first and remembers the window bounds', async () => {
  const { url } = (await waitFor('loadURL')) as { url: string } & FakeEvent;
  const exited = new Promise<number | null>((r) => proc!.once('exit', (code) => r(code)));
  proc!.kill('SIGTERM');
  expect(await exited).toBe(0);
  expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['quit-deferred', 'quit']));
  await expect(fetch(new URL('/api/health', url))).rejects.toThrow();
  const stateFile = join(work, 'user-data', 'window-state.json');
  expect(existsSync(stateFile)).toBe(true);
  expect(JSON.parse(readFileSync(stateFile, 'utf8'))).toMatchObject({ bounds: { x: 40, y: 30, width: 1360, height: 880 }, maximized: false });
});
