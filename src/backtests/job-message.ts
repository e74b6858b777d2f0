/** The queue backtest jobs are sent to (worked by job-handler.ts). */
export const BACKTEST_QUEUE = 'backtest-run'

/** What a queue job asks: run `attempt` (absent: 1) of backtest job `jobId`. */
export interface BacktestRun {
  jobId: string
  attempt?: number
}
