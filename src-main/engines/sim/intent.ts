// What a task asks for, read from its text the way a small model might.
import { evaluate, findExpression } from './arith.js';

export type Intent =
  | { kind: 'greeting' }
  | { kind: 'arithmetic'; expression: string; value: number }
  | { kind: 'shell'; command: string; file?: string; wantsNumber: boolean }
  | { kind: 'unknown' };

/** Drops agent scaffolding (`<system-reminder>…`, `<environment_context>…`) so only the request remains. */
export function taskText(content: string): string {
  return content.replace(/<([a-z][a-z0-9_-]*)(\s[^>]*)?>[\s\S]*?<\/\1>/g, '').trim();
}

const FILE = /(?:`([^`]+)`|"([^"]+\.[\w]{1,8})"|'([^']+\.[\w]{1,8})'|((?:[\w.-]+\/)*[\w-][\w.-]*\.[A-Za-z0-9]{1,8})\b)/;

function findFile(text: string): string | undefined {
  const m = FILE.exec(text);
  if (!m) return undefined;
  const f = (m[1] ?? m[2] ?? m[3] ?? m[4])!;
  return /\s/.test(f) ? undefined : f;
}

/** A directory named in the task ("in src/", "in the logs folder"); "this folder" means the current one. */
function findDir(text: string): string | undefined {
  const slashed = /\b(?:in|under|inside|of) (?:the )?(?:directory |folder )?`?((?:[\w.-]*\/[\w./-]*)|\.\.?)`?/i.exec(text)?.[1];
  if (slashed) return slashed;
  const named = /\b(?:in|under|inside|of) (?:the )?`?([\w.-]+)`? (?:directory|folder|dir)\b/i.exec(text)?.[1];
  return named && !/^(this|current|that|same|working|my|our)$/i.test(named) ? named : undefined;
}

function quote(p: string): string {
  return /^[\w./-]+$/.test(p) ? p : `'${p.replace(/'/g, `'\\''`)}'`;
}

/**
 * No file name, command word or expression the sim acts on is this long. Longer words are dropped before the
 * patterns below run: several of them backtrack over a whole word at every start position, so one 100k-character
 * word cost seconds of the event loop every engine shares.
 */
const MAX_WORD = 256;
const LONG_WORD = new RegExp(`\\S{${MAX_WORD + 1},}`, 'g');

export function readIntent(task: string): Intent {
  const t = task.replace(LONG_WORD, ' ').trim();
  const lower = t.toLowerCase();
  const explicit = /\b(?:run|execute)\s*(?::\s*|\s+)`([^`]+)`/i.exec(t) ?? /\b(?:run|execute) the command\s*:?\s*(.+)$/im.exec(t);
  if (explicit) return { kind: 'shell', command: explicit[1].trim(), wantsNumber: false };

  const file = findFile(t);
  const wantsNumber = /\b(how many|how much|count|number of|total|sum|average)\b/.test(lower);
  const dir = findDir(t);
  if (file) {
    const f = quote(file);
    if (/\blines?\b/.test(lower) && wantsNumber) return { kind: 'shell', command: `wc -l < ${f}`, file, wantsNumber };
    if (/\bwords?\b/.test(lower) && wantsNumber) return { kind: 'shell', command: `wc -w < ${f}`, file, wantsNumber };
    if (/\b(characters?|chars|bytes?)\b/.test(lower) && wantsNumber) return { kind: 'shell', command: `wc -c < ${f}`, file, wantsNumber };
    const occ = /how many times (?:does |is )?["'`]?([^"'`\s]+)["'`]? (?:appear|occur)/i.exec(t);
    if (occ) return { kind: 'shell', command: `grep -o ${quote(occ[1])} ${f} | wc -l`, file, wantsNumber: true };
    const grep = /\b(?:search|grep|find)(?: for)? ["'`]?([^"'`\s]+)["'`]? in\b/i.exec(t);
    if (grep) return { kind: 'shell', command: `grep -n ${quote(grep[1])} ${f}`, file, wantsNumber };
    if (/\b(sum|total)\b/.test(lower) && /\bnumbers?\b/.test(lower)) {
      return { kind: 'shell', command: `awk '{s+=$1} END {print s}' ${f}`, file, wantsNumber: true };
    }
    if (/\b(contain|contents?|show|print|read|cat|display|what'?s in|what is in|look at|open|say|says)\b/.test(lower) || wantsNumber) {
      return { kind: 'shell', command: `cat ${f}`, file, wantsNumber };
    }
  }
  if (/\b(how many files|number of files|count (the )?files)\b/.test(lower)) {
    return { kind: 'shell', command: dir && !file ? `ls ${quote(dir)} | wc -l` : 'ls | wc -l', wantsNumber: true };
  }
  if (/\b(list (the |all )?files|what files|which files|list the directory|directory listing|ls\b)/.test(lower)) {
    return { kind: 'shell', command: dir ? `ls ${quote(dir)}` : 'ls', wantsNumber: false };
  }
  const expression = findExpression(t);
  if (expression) {
    const value = evaluate(expression);
    if (value !== null) return { kind: 'arithmetic', expression, value };
  }
  if (/^(say )?(hi|hello|hey|howdy|greetings|good (morning|afternoon|evening))\b/.test(lower) && t.length < 60) return { kind: 'greeting' };
  return { kind: 'unknown' };
}
