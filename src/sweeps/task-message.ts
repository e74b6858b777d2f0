/** The queue a sweep's tasks are sent to (worked by task-handler.ts). */
export const SWEEP_QUEUE = 'backtest-sweep-task'

/** What a queue job asks: run `attempt` of task `task` of sweep `sweepId`, of user `user` (its turn: db/queue.ts). */
export interface SweepTask {
  sweepId: string
  task: number
  attempt: number
  user?: number
}

/**
 * A task's priority in its queue (higher first): a sweep's tasks in the order of their numbers, so the
 * tasks of sweeps queued together are taken in turn (each sweep's first, then each one's second, …),
 * not one whole sweep after another. A re-run or a statistics task (priority 0) goes first.
 */
export const taskPriority = (task: SweepTask): number => -task.task
