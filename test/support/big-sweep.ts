import type { Db } from '../../src/db/connect.js'
import { finishSweep, insertSweep, type StoredRun, storeRuns } from '../../src/sweeps/queries.js'
import { encodeFloats, returnsMatrix } from '../../src/sweeps/returns.js'
import { sweepResult } from '../../src/sweeps/result.js'
import type { SweepConfig } from '../../src/sweeps/schemas.js'

const DAY_MS = 86_400_000
const FIRST_DAY = Date.parse('2020-06-01T00:00:00Z')
/** A run's metrics as a runs task stores them (formatMetrics' fields); each run's sharpe is its own. */
const METRICS = { sharpe: '0', sortino: null, calmar: null, max_drawdown: '0', win_rate: null, profit_factor: null, cagr: '0', expected_value: null, total_trades: 0, avg_trade_duration_seconds: null }
/** Runs stored per transaction, about what a task's 250 ms batches hold. */
const BATCH = 100

/**
 * Run `runNo`'s daily equity: the capital, then a deterministic walk whose every return has all 17
 * significant digits (as real equities do), so the answer's text is as long as a real sweep's.
 */
export function seededEquity(runNo: number, points: number): Float64Array {
  const equity = new Float64Array(points)
  equity[0] = 10_000
  let state = runNo * 2_654_435_761
  for (let t = 1; t < points; t++) {
    state = (Math.imul(state ^ (state >>> 15), 2_246_822_507) + t) >>> 0
    equity[t] = equity[t - 1]! * (1 + (state / 2 ** 32 - 0.5) * 0.04)
  }
  return equity
}

/**
 * A done sweep of `runs` configurations over `points` daily equity points, stored as the sweep's own
 * code stores one (insertSweep, then the runs task's storeRuns in batches, then finishSweep), without
 * running a backtest: issue 37's 10,000 × 1,826 matrix in seconds.
 */
export async function seedDoneSweep(db: Db, userId: number, id: string, runs: number, points: number): Promise<void> {
  const configurations = Array.from({ length: runs }, (_, i) => ({ fast: i + 1 }))
  const config: SweepConfig = {
    base: {
      template_id: 'sma_cross',
      params: { fast: 1, slow: 30, allow_short: false },
      symbols: ['BTCUSDT'],
      timeframe: '1d',
      start: new Date(FIRST_DAY).toISOString(),
      end: new Date(FIRST_DAY + (points - 1) * DAY_MS).toISOString(),
      capital: '10000',
      leverage: 1,
      fee_model: 'fixed_bps',
      fee_bps: '5',
    } as SweepConfig['base'],
    grid: { fast: configurations.map((c) => c.fast) },
    objective: 'sharpe',
    // Two blocks: the statistics below are the task's own, over 2 CSCV splits instead of 12,870.
    cscv_blocks: 2,
    configurations: runs,
    skipped: 0,
  }
  const submittedAt = new Date(FIRST_DAY + points * DAY_MS)
  await insertSweep(db, { id, userId, templateId: 'sma_cross', config, configurations, submittedAt }, [{ first_run: 1, run_count: runs }])
  await db.updateTable('backtest_sweeps').set({ status: 'running', started_at: submittedAt }).where('id', '=', id).execute()
  const days = encodeFloats(Float64Array.from({ length: points }, (_, t) => FIRST_DAY + t * DAY_MS))
  for (let first = 1; first <= runs; first += BATCH) {
    const batch: StoredRun[] = []
    for (let runNo = first; runNo < Math.min(first + BATCH, runs + 1); runNo++) {
      const sharpe = ((runNo * 37) % 101) / 100
      batch.push({ run_no: runNo, params: configurations[runNo - 1]!, metrics: { ...METRICS, sharpe: String(sharpe) }, objective: sharpe, equity: encodeFloats(seededEquity(runNo, points)) })
    }
    await db.transaction().execute((trx) => storeRuns(trx, id, batch, days))
  }
  // As the statistics task ends a sweep: its result from the returns matrix.
  const result = sweepResult(config, await returnsMatrix(db, id))
  await db.transaction().execute((trx) =>
    finishSweep(trx, { id, userId, templateId: 'sma_cross' }, undefined, { status: 'done', result, best: result.best as Record<string, unknown> }, submittedAt),
  )
}

/** The ISO day of row `t` (the equity point return t ends on) of a sweep seeded by seedDoneSweep. */
export const seededDay = (t: number): string => new Date(FIRST_DAY + (t + 1) * DAY_MS).toISOString()
