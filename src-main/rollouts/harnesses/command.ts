// `command`: any shell command line, with placeholders replaced by shell-quoted values.
//
// {{OPENAI_BASE_URL}} {{ANTHROPIC_BASE_URL}} {{GEMINI_BASE_URL}} {{API_KEY}} {{MODEL}} {{PROMPT}}
// (+ {{SESSION_ID}} {{TASK_ID}} {{WORK_DIR}}). Each placeholder becomes ONE shell word, already quoted:
// write `mytool --prompt {{PROMPT}}`, not `"{{PROMPT}}"`. Inside your own quotes use the env instead
// ($OPENAI_BASE_URL, $OPENAI_API_KEY, $ROLLGATE_PROMPT, …: see common.ts sessionEnv).
import { shellQuote } from './common.js';
import type { Harness, HarnessContext } from './types.js';

export const PLACEHOLDERS = ['OPENAI_BASE_URL', 'ANTHROPIC_BASE_URL', 'GEMINI_BASE_URL', 'API_KEY', 'MODEL', 'PROMPT', 'SESSION_ID', 'TASK_ID', 'WORK_DIR'] as const;
type Placeholder = (typeof PLACEHOLDERS)[number];
const PLACEHOLDER_RE = /\{\{\s*([A-Z_]+)\s*\}\}/g;

export function placeholderValues(ctx: HarnessContext): Record<Placeholder, string> {
  return {
    OPENAI_BASE_URL: ctx.urls.openai,
    ANTHROPIC_BASE_URL: ctx.urls.anthropic,
    GEMINI_BASE_URL: ctx.urls.gemini,
    API_KEY: ctx.key,
    MODEL: ctx.model,
    PROMPT: ctx.prompt,
    SESSION_ID: ctx.sessionId,
    TASK_ID: ctx.taskId ?? '',
    WORK_DIR: ctx.workDir,
  };
}

export function unknownPlaceholders(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER_RE)].map((m) => m[1]).filter((n) => !(PLACEHOLDERS as readonly string[]).includes(n));
}

/** Replaces each placeholder with its shell-quoted value. */
export function renderCommand(template: string, values: Record<string, string>): string {
  return template.replace(PLACEHOLDER_RE, (_m, name: string) => {
    if (!(name in values)) throw new Error(`unknown placeholder {{${name}}}; known: ${PLACEHOLDERS.join(', ')}`);
    return shellQuote(values[name]);
  });
}

export const commandHarness: Harness = {
  name: 'command',
  description: 'any shell command line with {{OPENAI_BASE_URL}}-style placeholders (values are shell-quoted)',
  kind: 'command',
  dialect: 'any',
  defaultTimeoutMs: 600_000,
  validate(options) {
    if (!options.command || !options.command.trim()) return 'the command harness needs a "command" (a shell command line)';
    const unknown = unknownPlaceholders(options.command);
    return unknown.length ? `unknown placeholder(s) ${unknown.map((n) => `{{${n}}}`).join(', ')}; known: ${PLACEHOLDERS.join(', ')}` : null;
  },
  homeFiles: () => ({}),
  launch(ctx) {
    const line = renderCommand(ctx.options.command ?? '', placeholderValues(ctx));
    return { file: '/bin/sh', args: ['-c', line], env: {} };
  },
};
