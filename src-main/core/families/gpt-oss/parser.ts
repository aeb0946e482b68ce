// Harmony output → canonical deltas, streaming at any chunk boundary: the analysis channel is reasoning,
// final is content, a commentary message `to=functions.NAME` is a tool call whose arguments are the
// message text (vLLM's openai tool parser), commentary without a recipient is content (a preamble). Pure.
import type { CanonicalDelta } from '../../types.js';
import { pyJsonDumps } from '../py-json.js';
import { appendText, holdBack, stepParser } from '../tagged-parser.js';
import type { OutputParser, ParserOptions } from '../types.js';
import { H } from './harmony.js';

const BODY_ENDS = [H.end, H.call, H.ret];

interface Header { channel: string; recipient: string | null }

export function readHeader(header: string): Header {
  const channel = /<\|channel\|>\s*([A-Za-z_]+)/.exec(header)?.[1] ?? '';
  const recipient = /(?:^|\s)to=([^\s<]+)/.exec(header.replace(/<\|channel\|>/g, ' '))?.[1] ?? null;
  return { channel, recipient };
}

/** JSON arguments as Python's json.dumps prints them (vLLM re-dumps what parses); anything else as written. */
function normalArguments(text: string): string {
  try {
    return pyJsonDumps(JSON.parse(text));
  } catch {
    return text;
  }
}

export function createHarmonyParser(opts: ParserOptions = {}): OutputParser {
  const newId = opts.newToolCallId ?? ((i: number) => `call_${i}`);
  const parseTools = opts.parseToolCalls ?? true;
  const parseReasoning = opts.parseReasoning ?? true;
  let mode: 'header' | 'body' | 'between' = 'header';
  let header: Header = { channel: '', recipient: null };
  let buf = '';
  let callBody = '';
  let toolIndex = 0;
  const tail = opts.promptTail ?? '';
  if (tail.endsWith(H.message)) {
    mode = 'body';
    header = readHeader(tail.slice(tail.lastIndexOf(H.start)));
  }

  const isCall = () => parseTools && header.channel === 'commentary' && header.recipient !== null;
  const kind = (): 'reasoning' | 'content' => (header.channel === 'analysis' && parseReasoning ? 'reasoning' : 'content');

  const bodyText = (out: CanonicalDelta[], text: string) => {
    if (isCall()) callBody += text;
    else appendText(out, kind(), text);
  };

  const closeBody = (out: CanonicalDelta[]) => {
    if (isCall()) {
      const index = toolIndex++;
      const name = header.recipient!.startsWith('functions.') ? header.recipient!.slice('functions.'.length) : header.recipient!;
      out.push({ kind: 'tool_call', index, id: newId(index), name, arguments: normalArguments(callBody) });
    }
    callBody = '';
  };

  const step = (out: CanonicalDelta[], final: boolean): boolean => {
    switch (mode) {
      case 'header': {
        const at = buf.indexOf(H.message);
        if (at >= 0) {
          header = readHeader(buf.slice(0, at));
          buf = buf.slice(at + H.message.length);
          mode = 'body';
          return true;
        }
        if (final && buf) {
          // Not harmony after all: keep the text rather than lose it.
          appendText(out, 'content', buf);
          buf = '';
        }
        return false;
      }
      case 'body': {
        let best = -1;
        let tag = '';
        for (const t of BODY_ENDS) {
          const i = buf.indexOf(t);
          if (i >= 0 && (best < 0 || i < best)) { best = i; tag = t; }
        }
        if (best >= 0) {
          bodyText(out, buf.slice(0, best));
          buf = buf.slice(best + tag.length);
          closeBody(out);
          mode = 'between';
          return true;
        }
        const keep = final ? 0 : holdBack(buf, BODY_ENDS);
        bodyText(out, buf.slice(0, buf.length - keep));
        buf = buf.slice(buf.length - keep);
        if (final) { closeBody(out); mode = 'between'; }
        return false;
      }
      case 'between': {
        const at = buf.indexOf(H.start);
        if (at >= 0) {
          buf = buf.slice(at + H.start.length);
          mode = 'header';
          return true;
        }
        // Whatever sits between messages is not for the user; keep only a possible partial <|start|>.
        buf = final ? '' : buf.slice(buf.length - holdBack(buf, [H.start]));
        return false;
      }
    }
  };

  return stepParser((text) => { buf += text; }, step);
}
