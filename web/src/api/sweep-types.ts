/**
 * The sweep API's shapes (issue 23) as the dashboard reads them: the request, the sweep and its runs
 * as the typed client generates them from the routes (src/sweeps/schemas.ts), the result's statistics
 * as the statistics module types them (the API's schema leaves the histogram unknown, and has no
 * nulls). The walk-forward's windows and curve stay unknown: pages/sweeps/result-shapes.ts reads them.
 */
import type { Operation, RequestBody } from '../../../src/client/index.js'
import type { SweepStatistics } from '../../../src/sweeps/statistics/index.js'
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

/**
 * The statistics as the sweep's result carries them: the statistics module's own type (pure, no I/O),
 * where a statistic that cannot be computed is null and `reasons` says why.
 */
export type { SweepStatistics } from '../../../src/sweeps/statistics/index.js'

export interface SweepResult {
  best: { run_id: string; params: Record<string, unknown>; metrics: Metrics }
  statistics: SweepStatistics
  walk_forward?: { windows: unknown[]; curve: unknown[]; efficiency: number | null }
}

export type Sweep = Omit<ApiSweep, 'result'> & { result: SweepResult | null }
