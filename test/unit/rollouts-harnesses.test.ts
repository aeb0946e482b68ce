// Harness presets: command placeholders (shell-quoted, round-trip through sh), CLI configs written into
// the run's HOME, manual-session snippets; results maths (pass@k).
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { getHarness, listHarnesses, manualSnippet, renderCommand, shellQuote, type HarnessContext } from '../../src-main/rollouts/harnesses/index.js';
import { kValues, passAtK } from '../../src-main/rollouts/results.js';

const ctx = (over: Partial<HarnessContext> = {}): HarnessContext => ({
  prompt: 'What is 2 + 2?', taskId: 't1', sessionId: 'ses_1', key: '0123456789abcdef0123456789abcdef',
  urls: { openai: 'http://127.0.0.1:9/s/k/v1', anthropic: 'http://127.0.0.1:9/s/k', gemini: 'http://127.0.0.1:9/s/k' },
  model: 'Qwen/Qwen3-8B', workDir: '/tmp/w', home: '/tmp/h', options: {}, ...over,
});

const sh = (line: string) => execFileSync('/bin/sh', ['-c', line], { encoding: 'utf8' });

describe('command harness', () => {
  it('replaces each placeholder by one shell-quoted word, whatever it holds', () => {
    const nasty = `it's "quoted" $HOME \`whoami\` ; rm -rf / && echo pwned\nline2 *`;
    const line = renderCommand('printf "%s|" {{PROMPT}} {{MODEL}} {{OPENAI_BASE_URL}} {{API_KEY}}', { PROMPT: nasty, MODEL: 'Qwen/Qwen3-8B', OPENAI_BASE_URL: 'http://x/v1', API_KEY: 'k' });
    expect(sh(line)).toBe(`${nasty}|Qwen/Qwen3-8B|http://x/v1|k|`);
    expect(sh(`printf %s ${shellQuote('')}`)).toBe('');
  });

  it('validates placeholders and requires a command', () => {
    const h = getHarness('command')!;
    expect(h.validate!({})).toMatch(/needs a "command"/);
    expect(h.validate!({ command: 'x {{NOPE}} {{PROMPT}}' })).toMatch(/unknown placeholder\(s\) \{\{NOPE\}\}/);
    expect(h.validate!({ command: 'x {{ PROMPT }} {{ANTHROPIC_BASE_URL}} {{GEMINI_BASE_URL}}' })).toBeNull();
    const plan = h.launch(ctx({ options: { command: 'agent --url {{ANTHROPIC_BASE_URL}} {{PROMPT}}' } }), null);
    expect(plan).toEqual({ file: '/bin/sh', args: ['-c', "agent --url http://127.0.0.1:9/s/k 'What is 2 + 2?'"], env: {} });
  });
});

describe('CLI presets', () => {
  it('lists every preset with pinned versions', () => {
    expect(listHarnesses().map((h) => h.name)).toEqual(['builtin', 'claude-code', 'codex', 'gemini-cli', 'qwen-code', 'opencode', 'pi', 'cline', 'command', 'oracle', 'nop']);
    const pins = Object.fromEntries(listHarnesses().filter((h) => h.agent).map((h) => [h.name, `${h.agent!.package}@${h.agent!.version}`]));
    expect(pins).toEqual({
      'claude-code': '@anthropic-ai/claude-code@2.1.330', codex: '@openai/codex@0.169.0', 'gemini-cli': '@google/gemini-cli@0.61.0',
      'qwen-code': '@qwen-code/qwen-code@0.24.4', opencode: 'opencode-ai@1.18.33',
      pi: '@mariozechner/pi-coding-agent@0.73.1', cline: 'cline@3.0.65',
    });
  });

  it('writes each agent\'s config into its own HOME and points it at the session', () => {
    const c = ctx();
    const qwen = getHarness('qwen-code')!;
    expect(JSON.parse(qwen.homeFiles(c)['.qwen/settings.json'])).toMatchObject({ security: { auth: { selectedType: 'openai' } } });
    expect(qwen.launch(c, '/bin/qwen')).toMatchObject({ file: '/bin/qwen', args: ['-p', c.prompt, '--yolo'], env: { OPENAI_BASE_URL: c.urls.openai, OPENAI_API_KEY: c.key, OPENAI_MODEL: c.model } });

    const codex = getHarness('codex')!;
    const toml = codex.homeFiles(c)['.codex/config.toml'];
    expect(toml).toContain(`base_url = "${c.urls.openai}"`);
    expect(toml).toContain('wire_api = "responses"');
    expect(toml).toContain('model = "Qwen/Qwen3-8B"');
    expect(codex.launch(c, '/bin/codex').env).toMatchObject({ ROLLGATE_API_KEY: c.key, CODEX_HOME: '/tmp/h/.codex' });

    const gemini = getHarness('gemini-cli')!;
    expect(JSON.parse(gemini.homeFiles(c)['.gemini/settings.json']).security.auth.selectedType).toBe('gemini-api-key');
    expect(gemini.launch(c, '/bin/gemini').env).toMatchObject({ GOOGLE_GEMINI_BASE_URL: c.urls.gemini, GEMINI_API_KEY: c.key, GEMINI_CLI_TRUST_WORKSPACE: 'true' });

    const claude = getHarness('claude-code')!;
    const cj = JSON.parse(claude.homeFiles(c)['.claude.json']);
    expect(cj.customApiKeyResponses.approved).toEqual([c.key.slice(-20)]);
    expect(cj.projects['/tmp/w'].hasTrustDialogAccepted).toBe(true);
    expect(claude.launch(c, '/bin/claude').env).toMatchObject({ ANTHROPIC_BASE_URL: c.urls.anthropic, ANTHROPIC_API_KEY: c.key });

    const oc = getHarness('opencode')!;
    const ocj = JSON.parse(oc.homeFiles(c)['.config/opencode/opencode.json']);
    expect(ocj.provider.rollgate.options.baseURL).toBe(c.urls.openai);
    expect(ocj.model).toBe('rollgate/Qwen/Qwen3-8B');
    expect(oc.launch(c, '/bin/opencode').args).toEqual(['run', '-m', 'rollgate/Qwen/Qwen3-8B', 'What', 'is', '2', '+', '2?']);

    const pi = getHarness('pi')!;
    const pij = JSON.parse(pi.homeFiles(c)['.pi/agent/models.json']);
    expect(pij.providers.rollgate).toEqual({ baseUrl: c.urls.openai, api: 'openai-completions', apiKey: 'ROLLGATE_API_KEY', models: [{ id: c.model }] });
    expect(JSON.stringify(pi.homeFiles(c))).not.toContain(c.key);
    expect(pi.launch(c, '/bin/pi')).toMatchObject({ args: ['-p', '--no-session', '--provider', 'rollgate', '--model', c.model, c.prompt], env: { ROLLGATE_API_KEY: c.key, PI_OFFLINE: '1' } });

    const cline = getHarness('cline')!;
    const clj = JSON.parse(cline.homeFiles(c)['.cline/data/settings/providers.json']);
    expect(clj.lastUsedProvider).toBe('openai-compatible');
    expect(clj.providers['openai-compatible']).toMatchObject({ settings: { provider: 'openai-compatible', apiKey: c.key, model: c.model, baseUrl: c.urls.openai } });
    expect(clj.providers['openai-compatible'].updatedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(cline.launch(c, '/bin/cline').args).toEqual(['--data-dir', '/tmp/h/.cline/data', c.prompt]);
  });
});

describe('manual-session snippets', () => {
  const { prompt: _prompt, home: _home, ...manual } = ctx();
  it('gives env, config files and a script that writes them into a private HOME', () => {
    const s = manualSnippet(getHarness('gemini-cli')!, manual);
    expect(s.env).toMatchObject({ GOOGLE_GEMINI_BASE_URL: 'http://127.0.0.1:9/s/k', GEMINI_API_KEY: ctx().key });
    expect(s.files.map((f) => f.path)).toEqual(['.gemini/settings.json']);
    expect(s.install).toBe('npm install -g @google/gemini-cli@0.61.0');
    expect(s.shell).toContain(`cat > "$ROLLGATE_HOME/.gemini/settings.json" <<'ROLLGATE_EOF'`);
    expect(s.shell).toMatch(/HOME="\$ROLLGATE_HOME" npx -y -p @google\/gemini-cli@0\.61\.0 gemini -p 'Your task here' -m Qwen\/Qwen3-8B/);

    // The script runs: files land in the temp HOME, the env is exported (command swapped for a printer).
    const script = s.shell.replace(/^HOME=.*$/m, 'cat "$ROLLGATE_HOME/.gemini/settings.json"; printf "\\n%s\\n" "$GOOGLE_GEMINI_BASE_URL"');
    const out = sh(script);
    expect(JSON.parse(out.split('\n').slice(0, -2).join('\n')).security.auth.selectedType).toBe('gemini-api-key');
    expect(out.trim().split('\n').pop()).toBe('http://127.0.0.1:9/s/k');

    const codex = manualSnippet(getHarness('codex')!, manual);
    expect(codex.shell).toContain('export CODEX_HOME="$ROLLGATE_HOME"/.codex');
    // Paths in the private HOME stay expandable in argv too (Cline's --data-dir).
    const cline = manualSnippet(getHarness('cline')!, manual);
    expect(cline.command).toBe(`npx -y -p cline@3.0.65 cline --data-dir "$ROLLGATE_HOME"/.cline/data 'Your task here'`);
    const argv = sh(`ROLLGATE_HOME=/tmp/x; ${cline.command.replace('npx -y -p cline@3.0.65 cline', "printf '%s\\n'")}`);
    expect(argv).toBe('--data-dir\n/tmp/x/.cline/data\nYour task here\n');
    const builtin = manualSnippet(getHarness('builtin')!, manual);
    expect(builtin.command).toMatch(/^node \S+builtin-agent\.mjs --max-turns 8 -- 'Your task here'$/);
  });
});

describe('pass@k', () => {
  it('is the unbiased estimator', () => {
    expect(passAtK(4, 0, 1)).toBe(0);
    expect(passAtK(4, 4, 1)).toBe(1);
    expect(passAtK(4, 1, 1)).toBeCloseTo(0.25);
    expect(passAtK(4, 1, 2)).toBeCloseTo(0.5);
    expect(passAtK(4, 2, 2)).toBeCloseTo(1 - 1 / 6);
    expect(passAtK(4, 3, 2)).toBe(1);
    expect(kValues(1)).toEqual([1]);
    expect(kValues(4)).toEqual([1, 2, 4]);
    expect(kValues(6)).toEqual([1, 2, 4, 6]);
  });
});
