// Harness presets (DESIGN §7): the registry, and ready-to-paste snippets for manual sessions.
import { builtinHarness, BUILTIN_AGENT_PATH } from './builtin.js';
import { claudeCodeHarness, clineHarness, codexHarness, geminiCliHarness, opencodeHarness, piHarness, qwenCodeHarness } from './cli-agents.js';
import { commandHarness, placeholderValues, renderCommand } from './command.js';
import { nopHarness, oracleHarness } from './reference.js';
import { sessionEnv, shellQuote } from './common.js';
import type { Harness, HarnessContext, ManualSnippet } from './types.js';

export type { AgentPackage, Harness, HarnessContext, HarnessMount, HarnessOptions, LaunchPlan, ManualSnippet } from './types.js';
export { BUILTIN_AGENT_PATH } from './builtin.js';
export { PLACEHOLDERS, renderCommand, placeholderValues } from './command.js';
export { sessionEnv, shellQuote } from './common.js';

const HARNESSES: readonly Harness[] = [builtinHarness, claudeCodeHarness, codexHarness, geminiCliHarness, qwenCodeHarness, opencodeHarness, piHarness, clineHarness, commandHarness, oracleHarness, nopHarness];

export function listHarnesses(): readonly Harness[] {
  return HARNESSES;
}

export function getHarness(name: string): Harness | null {
  return HARNESSES.find((h) => h.name === name) ?? null;
}

export function harnessJson(h: Harness) {
  return {
    name: h.name, description: h.description, kind: h.kind, dialect: h.dialect,
    agent: h.agent ? { ...h.agent } : null, defaultTimeoutMs: h.defaultTimeoutMs,
  };
}

const HOME_VAR = '$ROLLGATE_HOME';

/** One shell word; a path in the private HOME keeps `$ROLLGATE_HOME` expandable (env values and argv alike). */
function shellWord(v: string): string {
  if (v.startsWith(HOME_VAR)) return `"${HOME_VAR}"${v.length > HOME_VAR.length ? shellQuote(v.slice(HOME_VAR.length)) : ''}`;
  return shellQuote(v);
}

function exportLine(k: string, v: string): string {
  return `export ${k}=${shellWord(v)}`;
}

/**
 * Env, config files and a command for running `h` by hand against a session. The files go into a
 * private HOME ($ROLLGATE_HOME, a temp folder) so the user's own agent config is left alone.
 */
export function manualSnippet(h: Harness, ctx: Omit<HarnessContext, 'home' | 'prompt'> & { prompt?: string }): ManualSnippet {
  const full: HarnessContext = { ...ctx, home: HOME_VAR, prompt: ctx.prompt ?? 'Your task here' };
  const files = Object.entries(h.homeFiles(full)).map(([path, content]) => ({ path, content }));
  const bin = h.agent ? h.agent.bin : null;
  const plan = h.launch(full, bin);
  const env: Record<string, string> = { ...sessionEnv(full), ...plan.env };
  delete env.ROLLGATE_PROMPT;
  let command: string;
  let install = '';
  if (h.kind === 'builtin') command = ['node', BUILTIN_AGENT_PATH, ...plan.args.slice(1)].map(shellQuote).join(' ');
  else if (h.kind === 'command') command = renderCommand(ctx.options.command ?? 'your-agent --base-url {{OPENAI_BASE_URL}} {{PROMPT}}', placeholderValues(full));
  else {
    install = `npm install -g ${h.agent!.package}@${h.agent!.version}`;
    command = [`npx -y -p ${h.agent!.package}@${h.agent!.version}`, h.agent!.bin, ...plan.args.map(shellWord)].join(' ');
  }
  const lines = [
    `# Rollgate session ${ctx.sessionId}: ${h.name} (${h.description})`,
    '# A private HOME for the agent\'s config, so your own config is left alone:',
    `export ROLLGATE_HOME="$(mktemp -d)"`,
  ];
  for (const f of files) {
    const dir = f.path.includes('/') ? f.path.slice(0, f.path.lastIndexOf('/')) : '';
    if (dir) lines.push(`mkdir -p "${HOME_VAR}/${dir}"`);
    lines.push(`cat > "${HOME_VAR}/${f.path}" <<'ROLLGATE_EOF'`, f.content.replace(/\n$/, ''), 'ROLLGATE_EOF');
  }
  for (const [k, v] of Object.entries(env)) lines.push(exportLine(k, v));
  if (install) lines.push(`# (or install once: ${install})`);
  lines.push(`HOME="${HOME_VAR}" ${command}`);
  return { harness: h.name, env, files, install, command, shell: `${lines.join('\n')}\n` };
}
