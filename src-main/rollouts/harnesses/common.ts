// Pieces every preset shares: the session environment and POSIX shell quoting.
import type { HarnessContext } from './types.js';

/** One shell word that the shell reads back as exactly `s` (POSIX single quotes). */
export function shellQuote(s: string): string {
  if (s !== '' && /^[\w@%+=:,./-]+$/.test(s)) return s;
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The env every run gets, whatever the agent: base URLs for each dialect, the key as each SDK's API key,
 * the model, and ROLLGATE_* facts (scripts can use them instead of placeholders).
 */
export function sessionEnv(ctx: HarnessContext): Record<string, string> {
  return {
    OPENAI_BASE_URL: ctx.urls.openai,
    OPENAI_API_KEY: ctx.key,
    OPENAI_MODEL: ctx.model,
    ANTHROPIC_BASE_URL: ctx.urls.anthropic,
    ANTHROPIC_API_KEY: ctx.key,
    GOOGLE_GEMINI_BASE_URL: ctx.urls.gemini,
    GEMINI_API_KEY: ctx.key,
    ROLLGATE_SESSION_ID: ctx.sessionId,
    ROLLGATE_MODEL: ctx.model,
    ROLLGATE_PROMPT: ctx.prompt,
    ...(ctx.taskId ? { ROLLGATE_TASK_ID: ctx.taskId } : {}),
  };
}

export const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;
