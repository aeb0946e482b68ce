// The one BrowserWindow: sandboxed, no Node, remembered bounds, shown once painted.
import { BrowserWindow, screen } from 'electron';
import { join } from 'node:path';
import { secureWebContents } from './security.js';
import { fitToDisplays, MIN_SIZE, readWindowState, writeWindowState } from './window-state.js';

export function openMainWindow(appUrl: string, userDataDir: string, iconPath?: string): BrowserWindow {
  const stateFile = join(userDataDir, 'window-state.json');
  const state = fitToDisplays(
    readWindowState(stateFile),
    screen.getAllDisplays().map((d) => d.workArea),
  );
  const win = new BrowserWindow({
    ...state.bounds,
    minWidth: MIN_SIZE.width,
    minHeight: MIN_SIZE.height,
    show: false,
    title: 'Rollgate',
    backgroundColor: '#0f1115',
    icon: iconPath,
    webPreferences: {
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      spellcheck: false,
    },
  });
  if (state.maximized) win.maximize();
  win.once('ready-to-show', () => win.show());
  // If the page never paints (server error, load failure), show the window anyway after a moment.
  setTimeout(() => {
    if (!win.isDestroyed() && !win.isVisible()) win.show();
  }, 4000).unref?.();
  secureWebContents(win.webContents, new URL(appUrl).origin);

  let timer: ReturnType<typeof setTimeout> | null = null;
  const save = () => {
    if (win.isDestroyed()) return;
    const maximized = win.isMaximized();
    // Keep the restored size while maximized, so un-maximizing after a restart looks right.
    const bounds = maximized || win.isFullScreen() ? win.getNormalBounds() : win.getBounds();
    writeWindowState(stateFile, { bounds, maximized });
  };
  const saveSoon = () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(save, 400);
  };
  win.on('resize', saveSoon);
  win.on('move', saveSoon);
  win.on('close', () => {
    if (timer) clearTimeout(timer);
    save();
  });

  void win.loadURL(appUrl);
  return win;
}
