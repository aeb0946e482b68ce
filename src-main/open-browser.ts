// Best effort: opens a URL in the desktop's browser; headless machines just keep the printed URL.
import { spawn } from 'node:child_process';

export function openInBrowser(url: string): void {
  const cmd = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  try {
    const child = spawn(cmd, [url], { stdio: 'ignore', detached: true });
    child.on('error', () => console.log(`Open ${url} in a browser.`));
    child.unref();
  } catch {
    console.log(`Open ${url} in a browser.`);
  }
}
