import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../db/connect.js'
import { feeRates, MissingMarkBars } from '../engine/index.js'
import { AppError } from '../http/errors.js'
import type { MarketData } from '../market/market-data.js'
import { exchangeServerTime } from '../market/exchange-clock.js'
import { findCustomVersion } from '../custom-templates/queries.js'
import { jobBudgetMs } from '../custom-templates/sandbox/limits.js'
import { exitRulesOf } from '../strategies/exits.js'
import { TIMEFRAME_MS } from '../strategies/timeframes.js'
import { EngineFailure } from '../work/engine-pool.js'
import type { CustomJob } from '../work/engine-thread.js'
import type { HistoryCaches } from '../work/history-cache.js'
import { dataWarnings, exchangeCoverage, NoData, requireBars } from './coverage.js'
import { exitTrigger, loadDetail } from './exit-history.js'
import { loadBars, loadFunding } from './history-store.js'
import type { JobConfig } from './schemas.js'
import { symbolRules, UpstreamHistory } from './upstream-history.js'

/**
 * The engine's input for a job's config: history from the store (through this node's caches), else the
 * exchange. `protective`: the run protects positions though its config states no `exits` (a sweep whose
 * grid varies them, a module that states levels), so it needs the bars exits are examined on too.
 */
export async function engineInput(
  deps: { db: Db; market: MarketData; log: FastifyBaseLogger },
  caches: HistoryCaches,
  config: JobConfig,
  jobId: string,
  isCancelled: () => boolean,
  onLoad: (fraction: number) => void,
  protective = false,
) {
  const intervalMs = TIMEFRAME_MS[config.timeframe]
  const start = Date.parse(config.start)
  const end = Date.parse(config.end)
  const history = new UpstreamHistory(deps.market, isCancelled)
  const archive = deps.market.archive && { client: deps.market.archive, warn: (details: Record<string, unknown>, message: string) => deps.log.warn({ ...details, job: jobId }, message) }
  // What is closed is the exchange's to say (its serverTime), not our clock: a bar forming there is never stored or used.
  // Unreachable, the job fails saying so: with our clock instead, a bar still forming there could be stored as final.
  const exchangeNow = await exchangeServerTime(deps.market).catch((error: unknown) => {
    deps.log.warn({ err: error, job: jobId }, 'backtest: the exchange time could not be read')
    throw new AppError('UPSTREAM_UNAVAILABLE', 'the exchange did not tell its time (GET /fapi/v1/time), which decides which bars are closed; try again later')
  })
  const bars = []
  const funding = []
  const rules = []
  for (const [i, symbol] of config.symbols.entries()) {
    rules.push(await symbolRules(deps.market, symbol))
    const columns = await loadBars(deps.db, history, caches, { symbol, interval: config.timeframe, intervalMs, start, end, now: exchangeNow }, archive)
    bars.push({ symbol, intervalMs, ...columns })
    // Funding a bar settles lies up to one interval past `end`.
    funding.push(await loadFunding(deps.db, history, caches, { symbol, start, end: end + intervalMs, now: exchangeNow }))
    onLoad((i + 1) / config.symbols.length)
  }
  const trigger = exitTrigger(config.exits, protective)
  const detail = trigger && (await loadDetail({ db: deps.db, market: deps.market, history, caches, archive, now: exchangeNow }, bars, config.timeframe, trigger))
  const fees = feeRates(config.fee_model, config.fee_bps === undefined ? undefined : Number(config.fee_bps))
  const exits = config.exits && exitRulesOf(config.exits)
  const slippageBps = config.slippage_bps === undefined ? undefined : Number(config.slippage_bps)
  return { templateId: config.template_id, params: config.params, bars, funding, rules, capital: Number(config.capital), leverage: config.leverage, fees, start, end, exits, slippageBps, detail }
}

/**
 * NO_DATA unless every symbol has a bar in the range (naming the coverage the exchange has); else the
 * warnings of what the history lacks.
 */
export async function checkedHistory(deps: { market: MarketData; now: () => number }, config: JobConfig, input: EngineInput): Promise<string[]> {
  const range = { timeframe: config.timeframe, start: input.start, end: input.end }
  await requireBars(input.bars, range, (symbol) => exchangeCoverage(deps.market.session(), symbol, config.timeframe, deps.now()).catch(() => undefined))
  return dataWarnings(input.bars, input.funding, range)
}

export type EngineInput = Awaited<ReturnType<typeof engineInput>>

/** A job of a user's module: the version it pinned, its seed, and its strategy-time budget for `bars` bars (from the version's measured cost). */
export async function customJob(db: Db, userId: number, config: JobConfig, bars: number): Promise<{ job: CustomJob; budgetMs: number } | undefined> {
  if (config.template_version === undefined) return undefined
  // Pinned: a job queued before its template was deleted still runs the code it recorded.
  const found = await findCustomVersion(db, userId, config.template_id, config.template_version, true)
  if (!found || found.compiled.sha256 !== config.template_sha256) {
    throw new AppError('NOT_FOUND', `template ${config.template_id} version ${config.template_version} no longer exists`, { field: 'template_id' })
  }
  const source = { id: found.id, version: found.version, description: found.description, timeframe: config.timeframe, file: found.compiled.file }
  return { job: { source, code: found.compiled.code, seed: config.seed ?? 0 }, budgetMs: jobBudgetMs(bars, found.description.smokeUsPerBar) }
}

/** What a job or a sweep records when loading its input or its engine run failed: an expected failure's code and words, else INTERNAL. */
export function describeFailure(error: unknown): { code: string; message: string } {
  if (error instanceof EngineFailure) return { code: error.code, message: error.message }
  if (error instanceof AppError || error instanceof NoData) return { code: error.code, message: error.message }
  if (error instanceof MissingMarkBars) return { code: 'NO_DATA', message: error.message }
  return { code: 'INTERNAL', message: 'the backtest failed unexpectedly' }
}
