// SWE-bench-style rows (DESIGN §7) → tasks. The mapping (documented in rollouts/README.md):
//   instance_id → id; problem_statement → prompt (verbatim); image → the container the agent works in and
//   the check runs in; workdir (default /testbed, where SWE-bench images keep the repository) → the agent's
//   folder; repo, base_commit, version → metadata; FAIL_TO_PASS + PASS_TO_PASS (arrays, or the JSON-encoded
//   strings SWE-bench publishes) → the tests the check runs with test_command (default `python -m pytest
//   -rA`); test_patch → applied only in the check's container; patch (the reference fix) → what the
//   `oracle` harness applies. The agent's changes are its diff against base_commit (else HEAD).
import { z } from 'zod';

const LIST_MESSAGE = 'must be a list of test names (an array or a JSON-encoded array)';
const testList = z.preprocess((v) => {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v || '[]');
  } catch {
    return v;
  }
}, z.array(z.string(), { error: LIST_MESSAGE }));

export const sweBenchRowSchema = z.object({
  instance_id: z.string().min(1).max(200).regex(/^[^\s/\\:]*$/, 'must not contain whitespace, slashes or colons'),
  problem_statement: z.string().min(1),
  image: z.string({ error: 'a SWE-bench-style row needs "image": the prebuilt image holding the repository' }).min(1),
  workdir: z.string().regex(/^\//, 'must be an absolute path in the image').optional(),
  repo: z.string().optional(),
  base_commit: z.string().regex(/^[0-9a-f]{4,64}$/i, 'must be a git commit id').optional(),
  version: z.union([z.string(), z.number()]).transform(String).optional(),
  test_command: z.string().min(1).optional(),
  FAIL_TO_PASS: testList.optional(),
  PASS_TO_PASS: testList.optional(),
  test_patch: z.string().optional(),
  patch: z.string().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
}).loose(); // SWE-bench rows carry more (hints_text, created_at, environment_setup_commit…): ignored

export type SweBenchRow = z.output<typeof sweBenchRowSchema>;

/** What the check of a SWE-bench-style task needs (kept with the task, never shown to the agent). */
export interface SweBenchSpec {
  testCommand: string;
  failToPass: string[];
  passToPass: string[];
  testPatch?: string;
  /** The reference fix: the `oracle` harness applies it. */
  goldPatch?: string;
  baseCommit?: string;
}

export const DEFAULT_SWEBENCH_TEST_COMMAND = 'python -m pytest -rA';
export const DEFAULT_SWEBENCH_WORKDIR = '/testbed';

export function isSweBenchRow(row: unknown): boolean {
  return !!row && typeof row === 'object' && 'instance_id' in row && !('id' in row);
}
