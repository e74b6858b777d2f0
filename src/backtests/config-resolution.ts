import crypto from 'node:crypto'
import type { Db } from '../db/connect.js'
import { isPositiveDecimal } from '../http/common-schemas.js'
import { AppError, invalidParameter, refusal } from '../http/errors.js'
import { parseUtcTime } from '../http/time.js'
import { exitsProblem, resolvedExits, slippageProblem } from '../strategies/exits.js'
import { findStrategyAnyState } from '../strategies/queries.js'
import type { FeeModel } from '../engine/index.js'
import { isCustomTemplateId } from '../custom-templates/ids.js'
import type { TemplateCatalog } from '../custom-templates/template-catalog.js'
import type { JobConfig, JobCreate } from './schemas.js'
import type { ValidateBudget } from '../custom-templates/sandbox/validate-budget.js'

const DECIMAL = /^(0|[1-9]\d{0,17})(\.\d{1,18})?$/
const MAX_SPAN_YEARS = 5
const DEFAULT_FEE_BPS = '5'

/**
 * Turns a create request into the job's resolved config: the stored strategy (strategy_id) as base,
 * request fields over it, defaults, then every check of the spec's 400 and 409 cases. `budget`: the
 * submission's sandbox time for params checks when it makes several (a sweep's base).
 */
export async function resolveJobConfig(db: Db, userId: number, input: JobCreate, catalog: TemplateCatalog, now: number, budget?: ValidateBudget): Promise<JobConfig> {
  const base: Partial<JobCreate> & { template_version?: number } = input.strategy_id !== undefined ? await strategyBase(db, userId, input.strategy_id) : {}
  const merged = { ...base, ...definedOnly(input) }
  const templateId = required(merged.template_id, 'template_id')
  const symbols = required(merged.symbols, 'symbols')
  const timeframe = required(merged.timeframe, 'timeframe')
  const capital = required(merged.capital, 'capital')
  const params = required(merged.params, 'params')
  const startText = required(merged.start, 'start')
  const endText = required(merged.end, 'end')

  if (!DECIMAL.test(capital) || !isPositiveDecimal(capital)) throw invalidParameter('capital', 'capital must be a decimal string greater than 0, e.g. "1000"')
  // The strategy's pinned version holds only while the request keeps its template.
  const version = input.template_version ?? (templateId === base.template_id ? base.template_version : undefined)
  // A custom job's config records these three; a built-in's never has them, so they are refused there rather than ignored.
  for (const field of ['template_version', 'template_sha256', 'seed'] as const) {
    const given = field === 'template_version' ? version : input[field]
    if (given !== undefined && !isCustomTemplateId(templateId)) throw invalidParameter(field, `${field} is for custom templates; ${templateId} is built in`)
  }
  const template = await catalog.resolve(userId, templateId, params, budget ? { version, budget } : { version })
  const pinned = template.custom
  if (pinned && input.template_sha256 !== undefined && input.template_sha256 !== pinned.compiled.sha256) {
    throw invalidParameter(
      'template_sha256',
      `version ${pinned.version} of template ${templateId} runs code of SHA-256 ${pinned.compiled.sha256}, not ${input.template_sha256}${input.template_version === undefined ? ' (give template_version to run an earlier version)' : ''}`,
    )
  }
  if (symbols.length > 1 && !template.multiSymbol) {
    throw invalidParameter('symbols', `template ${templateId} trades one symbol; give exactly one`)
  }
  if (Number(capital) < template.minCapital) {
    throw invalidParameter('capital', `template ${templateId} needs a capital of at least ${template.minCapital}`)
  }
  const start = parseUtcTime(startText, 'start')
  const end = parseUtcTime(endText, 'end')
  if (end <= start) throw invalidParameter('end', 'end must be later than start')
  const limit = new Date(start)
  limit.setUTCFullYear(limit.getUTCFullYear() + MAX_SPAN_YEARS)
  if (end > limit.getTime()) throw invalidParameter('end', `the span from start to end is at most ${MAX_SPAN_YEARS} years`)
  if (end > now) throw invalidParameter('end', 'end must not be in the future')

  const feeModel: FeeModel = merged.fee_model ?? 'fixed_bps'
  const feeBps = merged.fee_bps ?? DEFAULT_FEE_BPS
  if (feeModel === 'fixed_bps' && (!DECIMAL.test(feeBps) || Number(feeBps) > 1000)) {
    throw invalidParameter('fee_bps', 'fee_bps must be a decimal string from 0 to 1000')
  }
  // The request's exits replace the strategy's whole object: a job stating only a stop runs without the strategy's target.
  const exits = merged.exits
  const exitsWrong = exits && exitsProblem(exits)
  if (exitsWrong) throw refusal(exitsWrong)
  const slippageWrong = merged.slippage_bps === undefined ? undefined : slippageProblem(merged.slippage_bps)
  if (slippageWrong) throw refusal(slippageWrong)
  return {
    template_id: templateId,
    params: template.params,
    symbols,
    timeframe,
    start: new Date(start).toISOString(),
    end: new Date(end).toISOString(),
    capital,
    leverage: merged.leverage ?? 1,
    fee_model: feeModel,
    ...(feeModel === 'fixed_bps' ? { fee_bps: feeBps } : {}),
    // Only when given: a job without them keeps exactly the config (and result) it had before issue 30.
    ...(exits ? { exits: resolvedExits(exits) } : {}),
    ...(merged.slippage_bps !== undefined ? { slippage_bps: merged.slippage_bps } : {}),
    ...(input.strategy_id !== undefined ? { strategy_id: input.strategy_id } : {}),
    // A custom module's version and code are pinned, and its Math.random seeded (the request's seed, else a random
    // one), so this config posted again gives a byte-identical result.
    ...(pinned ? { template_version: pinned.version, template_sha256: pinned.compiled.sha256, seed: input.seed ?? crypto.randomInt(2 ** 31) } : {}),
  }
}

async function strategyBase(db: Db, userId: number, id: string): Promise<Partial<JobCreate> & { template_version?: number }> {
  const row = /^strat_[0-9a-f]{6,8}$/.test(id) ? await findStrategyAnyState(db, userId, id) : undefined
  if (!row) throw new AppError('NOT_FOUND', `strategy ${id} not found`, { field: 'strategy_id' })
  if (row.deleted_at !== null) throw new AppError('INVALID_STATE', `strategy ${id} was deleted`, { field: 'strategy_id' })
  if (row.status === 'error') throw new AppError('INVALID_STATE', `strategy ${id} is in error and cannot be backtested`, { field: 'strategy_id' })
  return {
    template_id: row.template_id,
    params: row.params,
    symbols: row.symbols,
    timeframe: row.timeframe as JobCreate['timeframe'],
    capital: row.capital,
    leverage: row.leverage,
    ...(row.exits !== null ? { exits: row.exits } : {}),
    // A strategy of a custom template backtests the version it runs, not the template's latest.
    ...(row.template_version !== null ? { template_version: row.template_version } : {}),
  }
}

/** Request fields read from the request alone, never merged over a strategy's. */
const PINS = new Set(['strategy_id', 'template_version', 'template_sha256', 'seed'])

function definedOnly(input: JobCreate): Partial<JobCreate> {
  return Object.fromEntries(Object.entries(input).filter(([key, value]) => value !== undefined && !PINS.has(key)))
}

function required<T>(value: T | undefined, field: string): T {
  if (value === undefined) throw invalidParameter(field, `${field} is required (in the request or through strategy_id)`)
  return value
}
