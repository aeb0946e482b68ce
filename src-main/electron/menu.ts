// Native application menu. Views are opened by changing the URL hash (same document, no reload).
import { app, clipboard, dialog, Menu, shell, type BrowserWindow, type MenuItemConstructorOptions } from 'electron';

export interface MenuContext {
  appUrl: string;
  dataDir: string;
  window: () => BrowserWindow | null;
}

export function installMenu(ctx: MenuContext): void {
  const isMac = process.platform === 'darwin';
  const go = (hash: string) => () => void ctx.window()?.webContents.loadURL(`${ctx.appUrl}/${hash}`);
  const template: MenuItemConstructorOptions[] = [
    ...(isMac ? [{ role: 'appMenu' as const }] : []),
    {
      label: '&File',
      submenu: [
        { label: 'Open Data Folder', click: () => void shell.openPath(ctx.dataDir) },
        { label: 'Open in Browser', click: () => void shell.openExternal(ctx.appUrl) },
        { label: 'Copy Server URL', click: () => clipboard.writeText(ctx.appUrl) },
        { type: 'separator' },
        isMac ? { role: 'close' } : { role: 'quit' },
      ],
    },
    { role: 'editMenu' },
    {
      label: '&View',
      submenu: [
        { label: 'Sessions', accelerator: 'CmdOrCtrl+1', click: go('#/sessions') },
        { label: 'Engines', accelerator: 'CmdOrCtrl+2', click: go('#/engines') },
        { type: 'separator' },
        { role: 'reload' },
        { role: 'toggleDevTools', visible: !app.isPackaged },
        { type: 'separator' },
        { role: 'resetZoom' },
        { role: 'zoomIn' },
        { role: 'zoomOut' },
        { type: 'separator' },
        { role: 'togglefullscreen' },
      ],
    },
    { role: 'windowMenu' },
    {
      role: 'help',
      submenu: [
        {
          label: 'About Rollgate',
          click: () =>
            void dialog.showMessageBox({
              type: 'info',
              title: 'About Rollgate',
              message: `Rollgate ${app.getVersion()}`,
              detail: `Agentic RL rollout gateway and workbench.\nServer: ${ctx.appUrl}\nData: ${ctx.dataDir}`,
            }),
        },
      ],
    },
  ];
  Menu.setApplicationMenu(Menu.buildFromTemplate(template));
}
