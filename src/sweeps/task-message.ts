/** The queue a sweep's tasks are sent to (created with the backtest queue: backtests/runner.ts ensureBacktestQueue). */
export const SWEEP_QUEUE = 'backtest-sweep-task'

/** What a queue job asks: run `attempt` of task `task` of sweep `sweepId`. */
export interface SweepTask {
  sweepId: string
  task: number
  attempt: number
}
