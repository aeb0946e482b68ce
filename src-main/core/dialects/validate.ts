// Turns zod failures into a DialectError that names the offending field.
import type { z } from 'zod';
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
