// Where the shared reference material lives: beside the checkout (CI clones main with shared/ next to it).
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const SHARED_DIR = process.env.ROLLGATE_SHARED_DIR ?? resolve(REPO_ROOT, '..', 'shared');
export const HARNESS_DIR = resolve(SHARED_DIR, 'reference', 'harnesses');
export const ENGINE_FIXTURES_DIR = resolve(SHARED_DIR, 'reference', 'engines', 'fixtures');
