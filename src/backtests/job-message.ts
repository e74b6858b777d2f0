/** The queue backtest jobs are sent to (worked by job-handler.ts). */
export const BACKTEST_QUEUE = 'backtest-run'

/** What a queue job asks: run `attempt` (absent: 1) of backtest job `jobId`, of user `user` (its turn: db/queue.ts). */
export interface BacktestRun {
  jobId: string
  attempt?: number
  user?: number
}
