// What a harness preset is: how to launch one agent against a session's URLs (DESIGN §7).
import type { SessionUrls } from '../../api/sessions.js';
import type { Task } from '../tasks.js';

export interface AgentPackage {
  /** npm package name, e.g. `@qwen-code/qwen-code`. */
  package: string;
  /** Pinned version, installed on demand into `<dataDir>/agents/`. */
  version: string;
  /** Executable name in node_modules/.bin. */
  bin: string;
}

export interface HarnessContext {
  prompt: string;
  taskId: string | null;
  sessionId: string;
  /** The session key: the agent's API key (the gateway also takes it in the URL path). */
  key: string;
  urls: SessionUrls;
  /** The engine's served model name. */
  model: string;
  workDir: string;
  home: string;
  /** Extra options from the batch spec (e.g. `command` for the command harness, `maxTurns` for builtin). */
  options: HarnessOptions;
  /** The task being run (the reference harnesses read its solution; agents get only the prompt). */
  task?: Task;
}

/** A host folder the harness needs mounted read-only at `target` inside the sandbox. */
export interface HarnessMount { host: string; target: string }

export interface HarnessOptions {
  /** The command line of the `command` harness, with `{{PLACEHOLDER}}`s. */
  command?: string;
  /** Turn limit of the builtin agent. */
  maxTurns?: number;
  /** Extra argv appended to a CLI agent's command line. */
  extraArgs?: string[];
}

export interface LaunchPlan {
  file: string;
  args: string[];
  /** Added to the run's base env (PATH, HOME, TMPDIR…) and the session env. */
  env: Record<string, string>;
}

export interface ManualSnippet {
  harness: string;
  /** Environment to export. */
  env: Record<string, string>;
  /** Config files, relative to the agent's HOME. */
  files: Array<{ path: string; content: string }>;
  /** How to install the agent (empty for builtin / command). */
  install: string;
  /** The command to run, with a placeholder prompt. */
  command: string;
  /** A ready-to-paste bash script doing all of the above in a private HOME. */
  shell: string;
}

export interface Harness {
  name: string;
  description: string;
  kind: 'builtin' | 'cli' | 'command' | 'reference';
  /** The wire dialect the agent speaks (for display). */
  dialect: string;
  agent?: AgentPackage;
  defaultTimeoutMs: number;
  /** Read-only mounts this harness needs for `task` (containers only: the oracle's /solution). */
  mounts?(task: Task | undefined): HarnessMount[];
  /** Config files written into the run's own HOME (relative paths). */
  homeFiles(ctx: HarnessContext): Record<string, string>;
  /** `bin` is the installed executable for CLI presets. */
  launch(ctx: HarnessContext, bin: string | null): LaunchPlan;
  /** Checks harness options at submit time; returns an error message or null. */
  validate?(options: HarnessOptions): string | null;
}
