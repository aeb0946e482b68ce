// `npm test`: every check the project has, in order, on a fresh machine of this kind.
// Installs Debian's Chromium for the UI tests when it is missing (never a Playwright browser download), and
// bubblewrap + a private dockerd for the sandbox tests (system-parts.mjs).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureSystemParts } from './system-parts.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const reports = join(root, 'test-results');
mkdirSync(reports, { recursive: true });

const only = process.argv.slice(2);
const tally = { passed: 0, failed: 0, skipped: 0 };
const failedSteps = [];

function step(name, cmd, args, countFrom) {
  if (only.length && !only.includes(name)) return;
  console.log(`\n▶ ${name}: ${[cmd, ...args].map((a) => a.replace(root + '/', '')).join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: process.env });
  if (countFrom) countFrom();
  if (r.status !== 0) failedSteps.push(name);
}

/** Adds a step's report (a JSON file) to the tally; `counts` reads {passed, failed, skipped} out of it. */
function countReport(file, counts) {
  return () => {
    if (!existsSync(file)) return;
    const c = counts(JSON.parse(readFileSync(file, 'utf8')));
    tally.passed += c.passed ?? 0;
    tally.failed += c.failed ?? 0;
    tally.skipped += c.skipped ?? 0;
  };
}

const countVitest = (file) => countReport(file, (j) => ({
  passed: j.numPassedTests, failed: j.numFailedTests, skipped: (j.numPendingTests ?? 0) + (j.numTodoTests ?? 0),
}));
const countPlaywright = (file) => countReport(file, ({ stats: s = {} }) => ({
  passed: (s.expected ?? 0) + (s.flaky ?? 0), failed: s.unexpected, skipped: s.skipped,
}));
/** The Python client's unittest suite writes `{passed, failed, skipped}` itself (clients/python/tests/run.py). */
const countPython = (file) => countReport(file, (j) => j);

/** Python >= 3.10 (with venv, for the install test) runs the client's tests; Debian's packages when missing. */
function ensurePython() {
  if (spawnSync('python3', ['-c', 'import sys, ensurepip; ensurepip.version(); sys.exit(sys.version_info < (3, 10))']).status === 0) return;
  if (process.getuid?.() !== 0) { console.log('Python >= 3.10 with venv missing and not root: install python3 and python3-venv for the Python client tests.'); return; }
  console.log('Installing Debian python3 + python3-venv for the Python client tests (apt-get)…');
  spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
  spawnSync('apt-get', ['install', '-y', '-qq', 'python3', 'python3-venv'], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}

function ensureChromium() {
  if (existsSync('/usr/bin/chromium')) return;
  if (process.getuid?.() !== 0) { console.log('Chromium missing and not root: install Debian\'s chromium package for the UI tests.'); return; }
  console.log('Installing Debian Chromium for the UI tests (apt-get)…');
  spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
  spawnSync('apt-get', ['install', '-y', '-qq', 'chromium'], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}

const vitestJson = (name) => ['--reporter=default', '--reporter=json', `--outputFile.json=${join(reports, name + '.json')}`];

step('lint', bin('eslint'), ['.']);
step('typecheck', bin('tsc'), ['--noEmit', '-p', '.']);
step('build', bin('vite'), ['build', '--logLevel', 'warn']);
// bubblewrap and a Docker daemon for the sandbox tests (scripts/system-parts.mjs): installed and started
// here when missing, DOCKER_HOST exported to the test processes, a dockerd started here stopped at the end.
const needsSandboxes = !only.length || only.includes('unit+integration') || only.includes('agents');
const systemParts = needsSandboxes ? await ensureSystemParts() : null;
try {
  step('unit+integration', bin('vitest'), ['run', ...vitestJson('vitest')], countVitest(join(reports, 'vitest.json')));
  if (!only.length || only.includes('python')) ensurePython();
  rmSync(join(reports, 'python.json'), { force: true });
  step('python', 'python3', [join(root, 'clients', 'python', 'tests', 'run.py'), join(reports, 'python.json')], countPython(join(reports, 'python.json')));
  step('agents', bin('vitest'), ['run', '--config', 'vitest.e2e.config.ts', ...vitestJson('agents')], countVitest(join(reports, 'agents.json')));
  if (!only.length || only.includes('ui')) ensureChromium();
  process.env.PLAYWRIGHT_JSON_OUTPUT_NAME = join(reports, 'playwright.json');
  step('ui', bin('playwright'), ['test', '--reporter=list,json'], countPlaywright(join(reports, 'playwright.json')));
} finally {
  // A dockerd this run started must not outlive it, whatever a step threw.
  await systemParts?.stop();
}

console.log(`\n${failedSteps.length ? `failed steps: ${failedSteps.join(', ')}` : 'all steps passed'}`);
console.log(`${tally.passed} passed, ${tally.failed} failed, ${tally.skipped} skipped`);
process.exit(failedSteps.length ? 1 : 0);
