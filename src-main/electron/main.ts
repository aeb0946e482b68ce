// Electron main process (DESIGN §2): start the in-process server with createApp, open one window on
// the served UI, and nothing else. The only place (with its siblings) that imports `electron`.
import { app, BrowserWindow, dialog, session } from 'electron';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createApp } from '../app.js';
import { defaultDataDir } from '../data-dir.js';
import { installMenu } from './menu.js';
import { secureSession } from './security.js';
import { openMainWindow } from './window.js';

type Server = Awaited<ReturnType<typeof createApp>>;

const DEFAULT_PORT = 8321;
let server: Server | null = null;
let mainWindow: BrowserWindow | null = null;

/** `--name=value` or `--name value` from the command line. */
function arg(name: string): string | undefined {
  const argv = process.argv;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === `--${name}`) return argv[i + 1];
    if (argv[i].startsWith(`--${name}=`)) return argv[i].slice(name.length + 3);
  }
  return undefined;
}

/** Where the built renderer lives; unpacked from the asar so the static server reads plain files. */
function uiDir(): string {
  const packed = join(process.resourcesPath ?? '', 'app.asar.unpacked', 'dist-renderer');
  return app.isPackaged && existsSync(packed) ? packed : join(app.getAppPath(), 'dist-renderer');
}

async function startServer(dataDir: string): Promise<Server> {
  const wanted = Number(arg('port') ?? process.env.ROLLGATE_PORT ?? DEFAULT_PORT);
  const config = { host: '127.0.0.1', dataDir, sim: true, uiDir: uiDir() };
  try {
    return await createApp({ ...config, port: wanted });
  } catch (err) {
    // Another Rollgate (e.g. `rollgate serve`) holds the port: take any free one instead.
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    return createApp({ ...config, port: 0 });
  }
}

function showWindow(): void {
  if (!server) return;
  if (mainWindow && !mainWindow.isDestroyed()) {
    if (mainWindow.isMinimized()) mainWindow.restore();
    mainWindow.focus();
    return;
  }
  const icon = join(app.getAppPath(), 'assets', 'icon.png');
  mainWindow = openMainWindow(server.url, app.getPath('userData'), existsSync(icon) ? icon : undefined);
  mainWindow.on('closed', () => {
    mainWindow = null;
  });
}

async function main(): Promise<void> {
  // One instance per user: two servers on one data folder would fight over the database.
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return;
  }
  app.on('second-instance', showWindow);
  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });
  app.on('activate', showWindow);

  let closing = false;
  app.on('before-quit', (event) => {
    if (!server || closing) return;
    event.preventDefault();
    closing = true;
    void server.close().finally(() => {
      server = null;
      app.quit();
    });
  });

  await app.whenReady();
  const dataDir = arg('data-dir') ?? process.env.ROLLGATE_DATA_DIR ?? defaultDataDir();
  try {
    server = await startServer(dataDir);
  } catch (err) {
    console.error(err);
    dialog.showErrorBox('Rollgate could not start', (err as Error).message ?? String(err));
    app.exit(1);
    return;
  }
  secureSession(session.defaultSession, new URL(server.url).origin);
  installMenu({ appUrl: server.url, dataDir, window: () => mainWindow });
  showWindow();
  console.log(`Rollgate listening on ${server.url}`);
}

void main();
