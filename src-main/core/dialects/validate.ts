// Turns zod failures into a DialectError that names the offending field.
import { z } from 'zod';
import { DialectError } from './codec.js';

export function parseWith<T>(schema: z.ZodType<T>, body: unknown, what: string): T {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new DialectError(`${what}: request body must be a JSON object`);
  }
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = issue.path.length ? issue.path.join('.') : '(body)';
  throw new DialectError(`${what}: ${path}: ${issue.message}`);
}

/** Sampling fields every dialect bounds the same way, so an impossible value is a 400 naming the field. */
export const temperatureSchema = z.number().min(0).nullish();
export const topPSchema = z.number().gt(0).max(1).nullish();

/** Deepest JSON nesting an agent request may have: far beyond any real request, far below the stack's limit. */
export const MAX_JSON_DEPTH = 256;

/** Whether `value` nests objects/arrays deeper than `max` levels (walked without recursion). */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (depth > max) return true;
    for (const child of Object.values(v as object)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}
