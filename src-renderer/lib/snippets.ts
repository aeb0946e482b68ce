// Client-side fallback for manual-session snippets, used only when the server has no
// GET /api/harnesses/:name/snippet route. Built from the recipes in
// shared/reference/harnesses/README.md with the session's URLs and key. Pure.
import type { CreatedSession, HarnessSnippet } from '../backend/types.js';

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function fallbackSnippet(harness: string, s: CreatedSession, model: string): HarnessSnippet {
  const origin = s.urls.anthropic; // …/s/<key>: Anthropic and Gemini agents add their own paths
  const openai = s.urls.openai; // …/s/<key>/v1
  let env: Record<string, string> = {};
  let files: Array<{ path: string; content: string }> = [];
  let command = '';
  let install = '';
  switch (harness) {
    case 'claude-code':
      env = { ANTHROPIC_BASE_URL: origin, ANTHROPIC_API_KEY: s.key, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' };
      install = 'npm install -g @anthropic-ai/claude-code';
      command = `claude -p "Your task here" --model ${q(model)}`;
      break;
    case 'codex':
      env = { GW_API_KEY: s.key };
      files = [{ path: '.codex/config.toml', content: `model = "${model}"\nmodel_provider = "gw"\n[model_providers.gw]\nname = "rollgate"\nbase_url = "${openai}"\nenv_key = "GW_API_KEY"\nwire_api = "responses"\n[analytics]\nenabled = false\n` }];
      install = 'npm install -g @openai/codex';
      command = 'codex exec --skip-git-repo-check "Your task here"';
      break;
    case 'gemini-cli':
      env = { GEMINI_API_KEY: s.key, GOOGLE_GEMINI_BASE_URL: origin, GEMINI_CLI_TRUST_WORKSPACE: 'true' };
      files = [{ path: '.gemini/settings.json', content: '{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false}}\n' }];
      install = 'npm install -g @google/gemini-cli';
      command = `gemini -p "Your task here" -m ${q(model)} --approval-mode yolo`;
      break;
    case 'qwen-code':
      env = { OPENAI_API_KEY: s.key, OPENAI_BASE_URL: openai, OPENAI_MODEL: model };
      install = 'npm install -g @qwen-code/qwen-code';
      command = 'qwen -p "Your task here" --yolo';
      break;
    case 'opencode':
      env = { GW_API_KEY: s.key, OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_AUTOUPDATE: '1' };
      files = [
        {
          path: '.config/opencode/opencode.json',
          content: `${JSON.stringify({ provider: { gw: { npm: '@ai-sdk/openai-compatible', name: 'Rollgate', options: { baseURL: openai, apiKey: '{env:GW_API_KEY}' }, models: { [model]: { name: model, tool_call: true } } } }, model: `gw/${model}`, small_model: `gw/${model}`, autoupdate: false, share: 'disabled' }, null, 2)}\n`,
        },
      ];
      install = 'npm install -g opencode-ai';
      command = 'opencode run Your task here';
      break;
    default:
      env = { OPENAI_BASE_URL: openai, OPENAI_API_KEY: s.key, OPENAI_MODEL: model };
      command = 'your-agent  # any OpenAI-compatible client: base URL and key from the env above';
  }
  const lines = [`# Rollgate session ${s.id}: ${harness} (built in the browser; the server offers no snippet route)`, 'export ROLLGATE_HOME="$(mktemp -d)"'];
  for (const f of files) {
    const dir = f.path.includes('/') ? f.path.slice(0, f.path.lastIndexOf('/')) : '';
    if (dir) lines.push(`mkdir -p "$ROLLGATE_HOME/${dir}"`);
    lines.push(`cat > "$ROLLGATE_HOME/${f.path}" <<'ROLLGATE_EOF'`, f.content.replace(/\n$/, ''), 'ROLLGATE_EOF');
  }
  for (const [k, v] of Object.entries(env)) lines.push(`export ${k}=${q(v)}`);
  if (install) lines.push(`# (install once: ${install})`);
  lines.push(`HOME="$ROLLGATE_HOME" ${command}`);
  return { sessionId: s.id, engine: s.engine ?? null, model, harness, env, files, install, command, shell: `${lines.join('\n')}\n` };
}
