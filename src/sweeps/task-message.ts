/** The queue a sweep's tasks are sent to (worked by task-handler.ts). */
export const SWEEP_QUEUE = 'backtest-sweep-task'

/** What a queue job asks: run `attempt` of task `task` of sweep `sweepId`. */
export interface SweepTask {
  sweepId: string
  task: number
  attempt: number
}
