// The real agent CLIs (shared/reference/harnesses/README.md): each writes its config into the run's own
// HOME and runs non-interactively with tools allowed. Pinned versions, installed on demand.
import { json } from './common.js';
import type { Harness, HarnessContext } from './types.js';

const CLI_TIMEOUT_MS = 600_000;
const extra = (ctx: HarnessContext) => ctx.options.extraArgs ?? [];

export const claudeCodeHarness: Harness = {
  name: 'claude-code',
  description: 'Claude Code (`claude -p`), Anthropic Messages',
  kind: 'cli',
  dialect: 'anthropic',
  agent: { package: '@anthropic-ai/claude-code', version: '2.1.330', bin: 'claude' },
  defaultTimeoutMs: CLI_TIMEOUT_MS,
  homeFiles(ctx) {
    // Pre-seeded like an onboarded install: no onboarding, the work folder trusted, the key approved.
    return {
      '.claude.json': json({
        hasCompletedOnboarding: true,
        customApiKeyResponses: { approved: [ctx.key.slice(-20)], rejected: [] },
        projects: { [ctx.workDir]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } },
      }),
      '.claude/settings.json': json({ permissions: { allow: ['Bash', 'Edit', 'Write', 'Read'] } }),
    };
  },
  launch(ctx, bin) {
    return {
      file: bin!,
      args: ['-p', ctx.prompt, '--model', ctx.model, '--allowedTools', 'Bash,Edit,Write,Read,Glob,Grep', ...extra(ctx)],
      env: {
        ANTHROPIC_BASE_URL: ctx.urls.anthropic,
        ANTHROPIC_API_KEY: ctx.key,
        // Claude Code asks for up to 128k output tokens, more than the whole context of many open models
        // (Qwen3-8B serves 40,960), which the gateway refuses naming max_tokens; 32k fits them, and token
        // mode still trims it to the room left after the prompt.
        CLAUDE_CODE_MAX_OUTPUT_TOKENS: '32000',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
        DISABLE_TELEMETRY: '1',
        DISABLE_ERROR_REPORTING: '1',
      },
    };
  },
};

export const codexHarness: Harness = {
  name: 'codex',
  description: 'Codex (`codex exec`), OpenAI Responses via a custom provider in ~/.codex/config.toml',
  kind: 'cli',
  dialect: 'openai-responses',
  agent: { package: '@openai/codex', version: '0.169.0', bin: 'codex' },
  defaultTimeoutMs: CLI_TIMEOUT_MS,
  homeFiles(ctx) {
    const q = (s: string) => JSON.stringify(s); // TOML basic strings accept JSON string escapes
    return {
      '.codex/config.toml': [
        `model = ${q(ctx.model)}`,
        'model_provider = "rollgate"',
        '',
        '[model_providers.rollgate]',
        'name = "Rollgate"',
        `base_url = ${q(ctx.urls.openai)}`,
        'env_key = "ROLLGATE_API_KEY"',
        'wire_api = "responses"',
        '',
        '[analytics]',
        'enabled = false',
        '',
      ].join('\n'),
    };
  },
  launch(ctx, bin) {
    // The run is already confined to its own folder and HOME; codex's own sandbox (bubblewrap) is off.
    return {
      file: bin!,
      args: ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', ...extra(ctx), ctx.prompt],
      env: { ROLLGATE_API_KEY: ctx.key, CODEX_HOME: `${ctx.home}/.codex` },
    };
  },
};

/** Gemini CLI and Qwen Code share one settings shape: the auth type, no telemetry, no update checks. */
function quietSettings(selectedType: string): string {
  return json({
    security: { auth: { selectedType } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
  });
}

export const geminiCliHarness: Harness = {
  name: 'gemini-cli',
  description: 'Gemini CLI (`gemini -p`), Gemini generateContent (streaming)',
  kind: 'cli',
  dialect: 'gemini',
  agent: { package: '@google/gemini-cli', version: '0.61.0', bin: 'gemini' },
  defaultTimeoutMs: CLI_TIMEOUT_MS,
  homeFiles: () => ({
    '.gemini/settings.json': quietSettings('gemini-api-key'),
  }),
  launch(ctx, bin) {
    return {
      file: bin!,
      args: ['-p', ctx.prompt, '-m', ctx.model, '--approval-mode', 'yolo', ...extra(ctx)],
      env: { GEMINI_API_KEY: ctx.key, GOOGLE_GEMINI_BASE_URL: ctx.urls.gemini, GEMINI_CLI_TRUST_WORKSPACE: 'true' },
    };
  },
};

export const qwenCodeHarness: Harness = {
  name: 'qwen-code',
  description: 'Qwen Code (`qwen -p --yolo`), OpenAI chat completions',
  kind: 'cli',
  dialect: 'openai-chat',
  agent: { package: '@qwen-code/qwen-code', version: '0.24.4', bin: 'qwen' },
  defaultTimeoutMs: CLI_TIMEOUT_MS,
  homeFiles: () => ({
    '.qwen/settings.json': quietSettings('openai'),
  }),
  launch(ctx, bin) {
    return {
      file: bin!,
      args: ['-p', ctx.prompt, '--yolo', ...extra(ctx)],
      env: { OPENAI_API_KEY: ctx.key, OPENAI_BASE_URL: ctx.urls.openai, OPENAI_MODEL: ctx.model },
    };
  },
};

export const opencodeHarness: Harness = {
  name: 'opencode',
  description: 'opencode (`opencode run`), OpenAI chat completions via a custom provider',
  kind: 'cli',
  dialect: 'openai-chat',
  agent: { package: 'opencode-ai', version: '1.18.33', bin: 'opencode' },
  defaultTimeoutMs: CLI_TIMEOUT_MS,
  homeFiles(ctx) {
    return {
      '.config/opencode/opencode.json': json({
        $schema: 'https://opencode.ai/config.json',
        provider: {
          rollgate: {
            npm: '@ai-sdk/openai-compatible',
            name: 'Rollgate',
            options: { baseURL: ctx.urls.openai, apiKey: '{env:ROLLGATE_API_KEY}' },
            models: { [ctx.model]: { name: ctx.model, tool_call: true } },
          },
        },
        model: `rollgate/${ctx.model}`,
        small_model: `rollgate/${ctx.model}`,
        permission: { edit: 'allow', bash: 'allow', webfetch: 'deny' },
        autoupdate: false,
        share: 'disabled',
      }),
    };
  },
  launch(ctx, bin) {
    // opencode quotes a single argv holding spaces; pass the prompt as separate words.
    const words = ctx.prompt.split(/ +/).filter(Boolean);
    return {
      file: bin!,
      args: ['run', '-m', `rollgate/${ctx.model}`, ...extra(ctx), ...words],
      env: {
        ROLLGATE_API_KEY: ctx.key,
        OPENCODE_DISABLE_MODELS_FETCH: '1',
        OPENCODE_DISABLE_AUTOUPDATE: '1',
        OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
      },
    };
  },
};


export const piHarness: Harness = {
  name: 'pi',
  description: 'pi coding agent (`pi -p`), OpenAI chat completions via a custom provider in ~/.pi/agent/models.json',
  kind: 'cli',
  dialect: 'openai-chat',
  agent: { package: '@mariozechner/pi-coding-agent', version: '0.73.1', bin: 'pi' },
  defaultTimeoutMs: CLI_TIMEOUT_MS,
  homeFiles(ctx) {
    return {
      // `apiKey` names the environment variable holding the key, so the key is not written to disk.
      '.pi/agent/models.json': json({
        providers: {
          rollgate: { baseUrl: ctx.urls.openai, api: 'openai-completions', apiKey: 'ROLLGATE_API_KEY', models: [{ id: ctx.model }] },
        },
      }),
      '.pi/agent/settings.json': json({ enableInstallTelemetry: false }),
    };
  },
  launch(ctx, bin) {
    return {
      file: bin!,
      args: ['-p', '--no-session', '--provider', 'rollgate', '--model', ctx.model, ...extra(ctx), ctx.prompt],
      // PI_OFFLINE: no update, package or telemetry calls at startup.
      env: { ROLLGATE_API_KEY: ctx.key, PI_OFFLINE: '1', PI_TELEMETRY: '0' },
    };
  },
};

export const clineHarness: Harness = {
  name: 'cline',
  description: 'Cline CLI (`cline "<task>"`, one-shot, tools auto-approved), OpenAI chat completions via its openai-compatible provider',
  kind: 'cli',
  dialect: 'openai-chat',
  agent: { package: 'cline', version: '3.0.65', bin: 'cline' },
  defaultTimeoutMs: CLI_TIMEOUT_MS,
  homeFiles(ctx) {
    // What `cline auth --provider openai-compatible --baseurl … --modelid …` writes, in the run's own HOME.
    return {
      '.cline/data/settings/providers.json': json({
        version: 1,
        lastUsedProvider: 'openai-compatible',
        modes: {},
        providers: {
          'openai-compatible': {
            settings: { provider: 'openai-compatible', apiKey: ctx.key, model: ctx.model, baseUrl: ctx.urls.openai },
            // Without `updatedAt` Cline discards the entry and falls back to its own hosted provider.
            updatedAt: '2026-01-01T00:00:00.000Z',
            tokenSource: 'manual',
          },
        },
      }),
    };
  },
  launch(ctx, bin) {
    // Without `--data-dir` the CLI hands the task to a hub daemon (`--cline-hub-daemon`, its own session, a
    // TCP port) that outlives it; with it, Cline runs its isolated local backend, which exits with the CLI.
    return {
      file: bin!,
      args: ['--data-dir', `${ctx.home}/.cline/data`, ...extra(ctx), ctx.prompt],
      env: { CLINE_NO_AUTO_UPDATE: '1' },
    };
  },
};
