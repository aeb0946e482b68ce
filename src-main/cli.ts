// `rollgate` command line (DESIGN §11). Wiring only: one file per command in commands/.
import { Command } from 'commander';
import { registerEval } from './commands/eval.js';
import { registerExport } from './commands/export.js';
import { registerServe } from './commands/serve.js';
import { registerSession } from './commands/session.js';
import { registerSim } from './commands/sim.js';
import { registerTasks } from './commands/tasks.js';

const program = new Command('rollgate').description('Agentic RL rollout gateway and workbench').showHelpAfterError();
registerServe(program);
registerSim(program);
registerExport(program);
registerEval(program);
registerSession(program);
registerTasks(program);

program.parseAsync(process.argv).catch((err: Error) => {
  console.error(`rollgate: ${err.message}`);
  process.exit(1);
});
