/**
 * The sweep API's shapes (issue 23) as the dashboard reads them: the request, the sweep and its runs
 * as the typed client generates them from the routes (src/sweeps/schemas.ts), with the result's
 * statistics written out here. The API types parts of the result as unknown (the logit histogram, the
 * walk-forward's windows and curve) and the statistics module may leave a statistic null with its
 * reason; pages/sweeps/result-shapes.ts reads those parts.
 */
import type { Operation, RequestBody } from '../../../src/client/index.js'
import type { Metrics } from './types.js'

type Ok<P extends Parameters<import('../../../src/client/index.js').PerpetuaClient['get']>[0]> = import('../../../src/client/index.js').SuccessBody<Operation<P, 'get'>>
type ApiSweep = Ok<'/v1/backtest/sweeps/{id}'>

export type SweepCreate = RequestBody<Operation<'/v1/backtest/sweeps', 'post'>>
export type Objective = NonNullable<SweepCreate['objective']>
export type RandomSpace = NonNullable<SweepCreate['random']>
export type ParamValue = number | boolean
export type SweepRun = Ok<'/v1/backtest/sweeps/{id}/runs'>['data'][number]
/** GET …/returns as JSON: T rows of N daily returns, the days they end on and the run ids of the columns. */
export type ReturnsMatrix = Exclude<Ok<'/v1/backtest/sweeps/{id}/returns'>, string>

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
  /** Why a null statistic is null, by field name. */
  reasons?: Record<string, string>
}

export interface SweepResult {
  best: { run_id: string; params: Record<string, unknown>; metrics: Metrics }
  statistics: SweepStatistics
  walk_forward?: { windows: unknown[]; curve: unknown[]; efficiency: number | null }
}

export type Sweep = Omit<ApiSweep, 'result'> & { result: SweepResult | null }
