import { jobHandler } from './backtests/job-handler.js'
import { taskHandler } from './sweeps/task-handler.js'
import type { AnyWorkHandler } from './work/work-handler.js'

/**
 * The kinds of work this service's workers run, each a handler on the worker side's one loop
 * (work/start-work.ts): a new kind of work is one more entry here, never a loop of its own.
 */
export function workHandlers(): AnyWorkHandler[] {
  return [jobHandler(), taskHandler()]
}
