// What token mode and the sim need to know about one model family (DESIGN §4 "Model families"). Pure.
import type { CanonicalDelta, ChatMessage, FunctionTool } from '../types.js';

export interface OutputParser {
  /** Engine text (special tokens kept), any chunking; returns what can be told apart so far. */
  push(text: string): CanonicalDelta[];
  end(): CanonicalDelta[];
}

export interface ParserOptions {
  /** The decoded end of the prompt (special tokens kept): tells whether output starts inside reasoning. */
  promptTail?: string;
  /** The request's tools: parameter values are typed by their JSON schema where the format carries text. */
  tools?: readonly FunctionTool[];
  /** false = tool-call markup stays content (no tools in the request). Default true. */
  parseToolCalls?: boolean;
  /** false = no reasoning split: reasoning markup stays content. Default true. */
  parseReasoning?: boolean;
  newToolCallId?: (index: number) => string;
}

/** One assistant turn as the model would write it (the sim's output and the property tests' input). */
export interface SampledTurn {
  reasoning?: string | null;
  content?: string | null;
  toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }>;
}

export interface PromptTurn { role: string; content: string }
export interface PromptTool { name: string; description: string; parameters: Record<string, unknown> }

/** A rendered prompt read back the way the model sees it (the sim's policy reads only this). */
export interface PromptView {
  /** Closed turns, in order; tool results are turns with role `tool`. */
  turns: PromptTurn[];
  tools: PromptTool[];
  /**
   * How the open assistant turn starts: `free` (model decides to think), `no-think` (thinking switched
   * off in the prompt), `in-think` (prompt ends inside reasoning), `none` (no open assistant turn).
   */
  generation: 'free' | 'no-think' | 'in-think' | 'none';
  /** Text before the first turn (the whole prompt for raw completions). */
  preamble: string;
}

export interface RenderInput {
  messages: ChatMessage[];
  tools?: FunctionTool[];
  addGenerationPrompt: boolean;
  chatTemplateKwargs?: Record<string, unknown>;
  /** `developer` messages shown as this role, in place. */
  developerRole: 'system' | 'developer';
}

export interface ModelFamily {
  readonly name: string;
  /** One line for the UI and errors. */
  readonly description: string;
  /** Token texts that end a sampled assistant turn (sent to the engine as stop token ids). */
  readonly stopTokens: readonly string[];
  /** Texts that must be single tokens: a tokenizer without them does not match this family. */
  readonly requiredTokens: readonly string[];
  /** Tokenizer spec used when the topology names none. */
  readonly defaultTokenizer: string;
  /**
   * How a turn that ended in `sampledEnd` closes when the template renders it again: prompt reuse keeps
   * the sampled ids and continues after that text in the re-render.
   */
  rerenderedEnd(sampledEnd: string): string;
  /** Where the template drops earlier reasoning on re-render (why a fresh render differs from the reused ids). */
  readonly reasoningDropped: string;
  /** Does a chat template (or tokenizer) look like this family's? Used to pick a default family. */
  detect(probe: { templateSource: string | undefined; hasToken(text: string): boolean }): boolean;
  /** Renders the conversation in code when the family ships no Jinja template (gpt-oss harmony). */
  render?(input: RenderInput): string;
  createParser(opts?: ParserOptions): OutputParser;
  /** The text the model samples for `turn` (without the end token) and the end token it stops on. */
  formatTurn(turn: SampledTurn, view: PromptView): { text: string; end: string };
  readPrompt(text: string): PromptView;
}
