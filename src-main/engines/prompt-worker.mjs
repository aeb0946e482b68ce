// Entry of a prompt worker thread (prompt-pool.ts). Plain JavaScript so a bare worker can load it; it
// registers tsx, then serves runPromptTask from the TypeScript sources.
import { register } from 'tsx/esm/api';

register();
const { runPromptTask } = await import('./prompt-task.ts');

export default function build(task) {
  // The pool asks once whether this worker could load the sources.
  return task.ping ? true : runPromptTask(task);
}
