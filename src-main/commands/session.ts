// `rollgate session --harness NAME`: a manual session plus ready-to-paste env/config for running that
// agent by hand against it. With --server it asks a running Rollgate; otherwise it starts one in-process
// (embedded sims) and keeps serving until Ctrl-C, then finishes the session.
import type { Command } from 'commander';
import { createApp } from '../app.js';
import { clientToken } from '../control-token.js';
import { defaultDataDir } from '../data-dir.js';
import { loadTopology } from '../engines/topology.js';
import { int } from './options.js';
import { call, holdingServer } from './remote.js';

interface SessionOptions {
  harness: string; engine?: string; server?: string; dataDir?: string; port: number; command?: string; topology?: string;
  sim: boolean; json?: boolean; controlTokenFile?: string;
}

async function createAndPrint(base: string, opts: SessionOptions): Promise<string> {
  const token = clientToken(opts.controlTokenFile, opts.dataDir ?? defaultDataDir());
  const s = await call<{ id: string; key: string }>(base, '/api/sessions', token, {
    method: 'POST', body: JSON.stringify({ harness: opts.harness, ...(opts.engine ? { engine: opts.engine } : {}), metadata: { manual: true } }),
  });
  const snippet = await call<{ shell: string; env: Record<string, string> }>(base, `/api/harnesses/${encodeURIComponent(opts.harness)}/snippet`, token, {
    method: 'POST', body: JSON.stringify({ sessionId: s.id, key: s.key, workDir: process.cwd(), ...(opts.command ? { command: opts.command } : {}) }),
  });
  if (opts.json) process.stdout.write(`${JSON.stringify(snippet, null, 2)}\n`);
  else {
    process.stdout.write(`${snippet.shell}`);
    process.stderr.write(`\n# session ${s.id}; inspect it at ${base}/#/sessions/${s.id}\n# finish it with: curl -X POST ${base}/api/sessions/${s.id}/finish -H 'content-type: application/json' -d '{"reward": 1}'\n`);
  }
  return s.id;
}

export function registerSession(program: Command): void {
  program.command('session')
    .description('create a manual session and print ready-to-paste env/config for running an agent against it')
    .requiredOption('--harness <name>', 'builtin | claude-code | codex | gemini-cli | qwen-code | opencode | command')
    .option('--engine <id>', 'engine id (default: the first engine)')
    .option('--server <url>', 'a running Rollgate (e.g. http://127.0.0.1:8321); default: start one here')
    .option('--control-token-file <file>', 'file (mode 0600) with the control token of --server (default: <data-dir>/control-token when present)')
    .option('--data-dir <dir>', 'data folder (when starting Rollgate here)')
    .option('--port <port>', 'port when starting Rollgate here (0 = any free port)', int('port'), 0)
    .option('--topology <file>', 'YAML file describing engines (when starting Rollgate here)')
    .option('--no-sim', 'do not start the embedded simulated engines (when starting Rollgate here)')
    .option('--command <cmd>', 'command line for --harness command')
    .option('--json', 'print the snippet as JSON')
    .action(async (opts: SessionOptions) => {
      if (opts.server) {
        await createAndPrint(opts.server, opts);
        return;
      }
      let app;
      try {
        app = await createApp({
          dataDir: opts.dataDir ?? defaultDataDir(), port: opts.port, sim: opts.sim, engines: opts.topology ? loadTopology(opts.topology) : [], owner: 'rollgate session',
        });
      } catch (e) {
        // A Rollgate already serves this data folder: the session is made there.
        const running = holdingServer(e);
        if (!running) throw e;
        await createAndPrint(running, opts);
        return;
      }
      let id: string;
      try {
        id = await createAndPrint(app.url, opts);
      } catch (e) {
        await app.close();
        throw e;
      }
      process.stderr.write(`# Rollgate listening on ${app.url}; Ctrl-C finishes the session and stops.\n`);
      let stopping = false;
      const stop = () => {
        if (stopping) process.exit(1);
        stopping = true;
        const finish = app.store.sessions.get(id)
          .then((s) => (s?.status === 'active' ? app.store.writer.updateSession(id, { status: 'finished', finishedAt: Date.now() }) : undefined));
        finish.catch(() => undefined).then(() => app.close()).finally(() => process.exit(0));
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
}
