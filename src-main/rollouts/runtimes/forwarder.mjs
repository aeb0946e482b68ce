// Runs inside a sandbox (plain Node, no dependencies): listens on 127.0.0.1:PORT, pipes each connection to
// the run's Unix socket (the sandbox's only way out), then runs the agent and exits with its status. The
// agent keeps an ordinary base URL (http://127.0.0.1:PORT/s/<key>/…) although the sandbox has no network.
//   node forwarder.mjs PORT SOCKET -- FILE [ARGS…]
import { spawn } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { constants } from 'node:os';

const [port, socketPath, dashes, file, ...args] = process.argv.slice(2);
if (!port || !socketPath || dashes !== '--' || !file) {
  process.stderr.write('usage: forwarder.mjs PORT SOCKET -- FILE [ARGS…]\n');
  process.exit(2);
}

const server = createServer((client) => {
  const upstream = connect(socketPath);
  client.pipe(upstream);
  upstream.pipe(client);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
});
server.on('error', (e) => {
  process.stderr.write(`rollgate forwarder: cannot listen on 127.0.0.1:${port}: ${e.message}\n`);
  process.exit(125);
});
server.listen(Number(port), '127.0.0.1', () => {
  const child = spawn(file, args, { stdio: 'inherit' });
  child.on('error', (e) => {
    process.stderr.write(`rollgate: agent could not start: ${e.message}\n`);
    process.exit(127);
  });
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 0)));
});
