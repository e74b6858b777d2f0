/**
 * The sweep API's shapes (issue 23), as branch sweep-service's src/sweeps/schemas.ts writes them. Until
 * that branch's routes are in the OpenAPI document the typed client is generated from, they are
 * written here; fields the issue leaves open (the logit histogram, the walk-forward's windows and
 * curve) are read through the narrow readers in pages/sweeps/result-shapes.ts.
 */
import type { Job, JobCreate, Metrics } from './types.js'

export type SweepStatus = 'queued' | 'running' | 'done' | 'failed' | 'cancelled'
export type Objective = 'sharpe' | 'sortino' | 'calmar' | 'cagr' | 'max_drawdown' | 'win_rate' | 'profit_factor' | 'expected_value' | 'total_trades'
export type ParamValue = number | boolean

export interface RandomSpace {
  samples: number
  seed?: number
  space: Record<string, { min: number; max: number; step?: number }>
}

export interface WalkForwardConfig {
  in_sample_days: number
  out_of_sample_days: number
  anchored?: boolean
}

export interface SweepCreate {
  base: JobCreate
  grid?: Record<string, ParamValue[]>
  random?: RandomSpace
  objective?: Objective
  cscv_blocks?: number
  walk_forward?: WalkForwardConfig
}

export interface Pbo {
  value: number | null
  combinations: number
  logit_mean: number | null
  logit_median: number | null
  histogram: unknown
  prob_oos_loss: number | null
  degradation_slope: number | null
  degradation_intercept: number | null
}

export interface SweepStatistics {
  n_trials: number
  sharpe_variance: number | null
  expected_max_sharpe: number | null
  psr: number | null
  dsr: number | null
  pbo: Pbo
  /** Why a null statistic is null, by field name (branch sweep-stats). */
  reasons?: Record<string, string>
}

export interface SweepRun {
  run_id: string
  params: Record<string, unknown>
  metrics: Metrics
}

export interface Sweep {
  id: string
  status: SweepStatus
  progress: number
  config: Omit<SweepCreate, 'base' | 'objective' | 'cscv_blocks'> & {
    /** The base backtest's configuration, resolved as a job's is. */
    base: Job['config']
    objective: Objective
    cscv_blocks: number
    configurations: number
    skipped?: number
  }
  submitted_at: string
  started_at: string | null
  finished_at: string | null
  result: {
    best: SweepRun
    statistics: SweepStatistics
    walk_forward?: { windows: unknown[]; curve: unknown[]; efficiency: number | null }
  } | null
  error: { code: string; message: string } | null
}

/** GET …/returns as JSON: T rows of N daily returns, the days they end on and the run ids of the columns. */
export interface ReturnsMatrix {
  run_ids: string[]
  dates: string[]
  returns: number[][]
}
