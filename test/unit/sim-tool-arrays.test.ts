// The sim fills a shell tool's command the way the tool's schema wants it (issue 19): Cline's
// `run_commands` takes a list of commands, Codex's `shell` an argv array, most tools a string.
import { describe, expect, it } from 'vitest';
import { matchShell } from '../../src-main/engines/sim/tool-match.js';

const tool = (name: string, description: string, properties: Record<string, unknown>, required: string[]) => ({ name, description, parameters: { type: 'object', properties, required } });

describe('sim shell tool arguments', () => {
  it('a list of commands gets one valid command string per item (Cline run_commands)', () => {
    const runCommands = tool('run_commands', 'Run one or more shell commands in the workspace.', {
      commands: { type: 'array', items: { type: 'string' }, description: 'The commands to run, each a shell command line.' },
    }, ['commands']);
    const use = matchShell([runCommands], 'wc -l notes.txt')!;
    expect(use.tool.name).toBe('run_commands');
    expect(use.args).toEqual({ commands: ['wc -l notes.txt'] });
  });

  it('a list of command objects names the command inside each item', () => {
    const t = tool('run_commands', 'Run shell commands.', {
      commands: { type: 'array', items: { type: 'object', properties: { command: { type: 'string' }, timeout: { type: 'number' } }, required: ['command'] } },
    }, ['commands']);
    expect(matchShell([t], 'ls')!.args).toEqual({ commands: [{ command: 'ls' }] });
  });

  it('an argv array stays argv (Codex shell), a string stays a string', () => {
    const codex = tool('shell', 'Runs a shell command and returns its output.', { command: { type: 'array', items: { type: 'string' } }, workdir: { type: 'string' } }, ['command']);
    expect(matchShell([codex], 'ls')!.args).toEqual({ command: ['bash', '-lc', 'ls'] });
    const bash = tool('bash', 'Run a bash command.', { command: { type: 'string' } }, ['command']);
    expect(matchShell([bash], 'ls')!.args).toEqual({ command: 'ls' });
  });
});
