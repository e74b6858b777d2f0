import type { Db } from '../db/connect.js'
import { DAY_MS } from '../engine/index.js'
import { accepted, AppError, invalidParameter, refusal } from '../http/errors.js'
import { resolveJobConfig } from '../backtests/config-resolution.js'
import type { JobConfig } from '../backtests/schemas.js'
import { findCustomVersion } from '../custom-templates/queries.js'
import { isCustomTemplateId } from '../custom-templates/ids.js'
import type { TemplateCatalog } from '../custom-templates/template-catalog.js'
import { ValidateBudget } from '../custom-templates/sandbox/validate-budget.js'
import { type PropertySchema, templateById, valueProblem } from '../templates/validate.js'
import { type Combination, combinationsOf, sweptField } from './configurations.js'
import { MAX_CONFIGURATIONS, type SweepConfig, type SweepCreate } from './schemas.js'
import { binomial, WALK_FORWARD_OBJECTIVES } from './statistics/index.js'
import { exitFieldOf, exitText, isExitKey, splitConfiguration, SWEPT_EXIT_FIELDS, sweptExitsProblem } from './swept-exits.js'

const DEFAULT_BLOCKS = 16
/**
 * CSCV's work is C(S, S/2) splits × N runs ranked: the default S = 16 over the largest sweep (10,000)
 * took 2.5 s of the worker's main thread (bench); S = 20 there would take ~35 s, so more is refused.
 */
const MAX_CSCV_WORK = binomial(DEFAULT_BLOCKS, DEFAULT_BLOCKS / 2) * MAX_CONFIGURATIONS

/** A sweep request resolved: its config and every configuration's params, in run order. */
export interface ResolvedSweep {
  config: SweepConfig
  configurations: Record<string, unknown>[]
}

/**
 * Resolves and checks a sweep request: `base` exactly as a backtest job's config (its errors name
 * base.<field>), every swept param and value against the template's params_schema (errors name
 * grid.<param> or random.space.<param>), then each combination through the template's own rule across
 * params; a combination that rule refuses (sma_cross fast ≥ slow) is skipped and counted, not run.
 * A user's module answers all of the submission's checks within one budget (SANDBOX_LIMITS.submissionValidateMs).
 * `checkHistory` judges base's symbols and range against the exchange before the range is judged against
 * the statistics' needs: a range without bars is NO_DATA, not advice about cscv_blocks (issue 35).
 */
export async function resolveSweep(db: Db, userId: number, input: SweepCreate, catalog: TemplateCatalog, now: number, checkHistory: (base: JobConfig) => Promise<void> = async () => undefined): Promise<ResolvedSweep> {
  const budget = new ValidateBudget()
  const base = await resolveBaseWithin(db, userId, input, catalog, now, budget)
  const { properties, moduleValidates } = await paramsSchemaOf(db, userId, base)
  const swept = Object.keys(input.grid ?? input.random?.space ?? {})
  for (const name of swept) {
    const field = sweptField(input, name)
    if (isExitKey(name)) {
      checkExitKey(input, name, field)
      continue
    }
    const schema = properties[name]
    if (!schema) throw invalidParameter(field, `${name} is not a parameter of ${base.template_id}; its parameters are ${Object.keys(properties).join(', ')}`)
    // The value is named: in a list of ten, "must be between 2 and 999" alone leaves the trader to find which (issue 35).
    const check = (at: string, value: unknown) => {
      const problem = valueProblem(at, schema, value)
      if (problem) throw refusal({ ...problem, message: `${problem.message}; ${JSON.stringify(value)} is not` })
    }
    if (input.grid) for (const value of input.grid[name]!) check(field, value)
    else for (const bound of ['min', 'max'] as const) check(`${field}.${bound}`, input.random!.space[name]![bound])
  }
  checkExitRanges(input, base)
  const combinations = combinationsOf(input, (name) => properties[name]?.type === 'integer')
  const parts = combinations.map((combination) => configurationParts(combination))
  for (const { swept } of parts) {
    const problem = sweptExitsProblem(base.exits, swept, (key) => sweptField(input, key))
    if (problem) throw refusal(problem)
  }
  const configurations = await validCombinations(userId, base, parts, catalog, moduleValidates, budget)
  if (configurations.valid.length === 0) {
    throw invalidParameter(input.grid ? 'grid' : 'random', `none of the ${combinations.length} configurations is valid for ${base.template_id}: ${configurations.firstProblem}`)
  }
  await checkHistory(base)
  const blocks = input.cscv_blocks ?? DEFAULT_BLOCKS
  checkDays(base, blocks, input.walk_forward, input.objective ?? 'sharpe')
  checkCscvWork(blocks, configurations.valid.length)
  const config: SweepConfig = {
    base,
    ...(input.grid ? { grid: input.grid } : { random: { ...input.random!, seed: input.random!.seed ?? 1 } }),
    objective: input.objective ?? 'sharpe',
    cscv_blocks: blocks,
    ...(input.walk_forward ? { walk_forward: { ...input.walk_forward, anchored: input.walk_forward.anchored ?? false } } : {}),
    configurations: configurations.valid.length,
    skipped: combinations.length - configurations.valid.length,
  }
  return { config, configurations: configurations.valid }
}

/** base resolved as POST /v1/backtest/jobs resolves a job; its errors name base.<field>. */
async function resolveBase(db: Db, userId: number, input: SweepCreate, catalog: TemplateCatalog, now: number, budget: ValidateBudget): Promise<JobConfig> {
  const params = input.base.params ?? (input.base.strategy_id === undefined ? {} : undefined)
  return underBase(() => resolveJobConfig(db, userId, { ...input.base, params }, catalog, now, budget))
}

/** Runs a check of the base as a job's, its errors naming base.<field>. */
export async function underBase<T>(check: () => Promise<T>): Promise<T> {
  try {
    return await check()
  } catch (error) {
    if (error instanceof AppError && error.field !== undefined) throw new AppError(error.code, error.message, { field: `base.${error.field}`, headers: error.headers })
    throw error
  }
}

/** Configurations tried as the base's context when base.params alone break the template's rule. */
const BASE_TRIES = 100

/**
 * base resolved as a job, except that the template's rule across params does not judge base.params on
 * their own when the sweep replaces some of them: sma_cross base {fast: 50} breaks fast < slow against
 * the default slow 30, yet a grid over slow from 60 is a sensible sweep. Then base is resolved with the
 * first configuration (of the first BASE_TRIES) that makes it valid; every configuration replaces the
 * swept params anyway. Anything else wrong with base (a param unknown or out of its range and not swept,
 * the symbols, the range) is refused as before, with the first error.
 */
async function resolveBaseWithin(db: Db, userId: number, input: SweepCreate, catalog: TemplateCatalog, now: number, budget: ValidateBudget): Promise<JobConfig> {
  try {
    return await resolveBase(db, userId, input, catalog, now, budget)
  } catch (error) {
    const space = input.grid ?? input.random?.space
    const templateId = input.base.template_id
    // The module's checks ran out of the submission's time: no more tries.
    if (budget.leftMs() <= 0) throw error
    if (!(error instanceof AppError) || error.code !== 'INVALID_PARAMETER' || !error.field?.startsWith('base.params') || !space || templateId === undefined) throw error
    let combinations: Combination[]
    try {
      const { properties } = await paramsSchemaOf(db, userId, { template_id: templateId, template_version: input.base.template_version })
      combinations = combinationsOf(input, (name) => properties[name]?.type === 'integer')
    } catch {
      throw error
    }
    for (const combination of combinations.slice(0, BASE_TRIES)) {
      try {
        const { params } = splitConfiguration(combination)
        return await resolveBase(db, userId, { ...input, base: { ...input.base, params: { ...input.base.params, ...params } } }, catalog, now, budget)
      } catch (retry) {
        if (!(retry instanceof AppError) || retry.code !== 'INVALID_PARAMETER' || budget.leftMs() <= 0) throw retry
      }
    }
    throw error
  }
}

/** The template's params_schema properties, and whether a user's module has a validate() rule to run too. */
async function paramsSchemaOf(db: Db, userId: number, base: Pick<JobConfig, 'template_id' | 'template_version'>): Promise<{ properties: Record<string, PropertySchema>; moduleValidates: boolean }> {
  if (!isCustomTemplateId(base.template_id)) return { properties: accepted(templateById(base.template_id)).schema.properties as Record<string, PropertySchema>, moduleValidates: false }
  const found = await findCustomVersion(db, userId, base.template_id, base.template_version, true)
  if (!found) throw invalidParameter('base.template_id', `unknown template_id "${base.template_id}"`)
  return { properties: found.description.paramsSchema.properties, moduleValidates: found.description.hasValidate }
}

/**
 * Each combination's params over the base params, resolved by the template: a built-in's refine, a user's
 * module's validate() in its sandbox (only when it exports one: its schema checks were done above). A
 * valid configuration is its resolved params and its swept exits keys.
 */
async function validCombinations(userId: number, base: JobConfig, combinations: ConfigurationParts[], catalog: TemplateCatalog, moduleValidates: boolean, budget: ValidateBudget) {
  const paramsList = combinations.map(({ params }) => ({ ...base.params, ...params }))
  // A user's module without validate() has nothing to say beyond the schema checks done already.
  const resolved = isCustomTemplateId(base.template_id) && !moduleValidates ? paramsList : await catalog.resolveParamsMany(userId, base.template_id, paramsList, { version: base.template_version, budget })
  const valid: Record<string, unknown>[] = []
  let firstProblem = ''
  resolved.forEach((one, i) => {
    const { params, swept } = combinations[i]!
    if (!(one instanceof AppError)) return void valid.push({ ...one, ...swept })
    if (one.code !== 'INVALID_PARAMETER') throw one
    firstProblem ||= `${JSON.stringify(params)}: ${one.message}`
  })
  return { valid, firstProblem }
}

function checkCscvWork(blocks: number, runs: number): void {
  const splits = binomial(blocks, blocks / 2)
  if (splits * runs <= MAX_CSCV_WORK) return
  let fewer = blocks - 2
  while (fewer > 2 && binomial(fewer, fewer / 2) * runs > MAX_CSCV_WORK) fewer -= 2
  const most = Math.floor(MAX_CSCV_WORK / splits)
  throw invalidParameter(
    'cscv_blocks',
    `cscv_blocks ${blocks} over ${runs.toLocaleString('en-US')} configurations ranks every run in ${splits.toLocaleString('en-US')} splits, more than a sweep computes: use cscv_blocks ${fewer} or fewer, or at most ${most.toLocaleString('en-US')} configurations with ${blocks} blocks`,
  )
}

/** The statistics need at least two daily returns per CSCV block; the walk-forward one window, and an objective daily returns hold. */
function checkDays(base: JobConfig, blocks: number, walkForward: SweepCreate['walk_forward'], objective: string): void {
  const days = Math.floor((Date.parse(base.end) - Date.parse(base.start)) / DAY_MS)
  if (days < 2 * blocks) {
    throw invalidParameter('cscv_blocks', `the range holds ${days} daily returns; cscv_blocks ${blocks} needs at least ${2 * blocks} (two per block): lengthen the range or use fewer blocks`)
  }
  if (walkForward && !Object.hasOwn(WALK_FORWARD_OBJECTIVES, objective)) {
    throw invalidParameter('objective', `a walk-forward ranks windows by daily returns, which hold no ${objective}; use one of ${Object.keys(WALK_FORWARD_OBJECTIVES).filter((name) => name !== 'total_return').join(', ')}`)
  }
  if (walkForward && walkForward.in_sample_days + walkForward.out_of_sample_days > days) {
    throw invalidParameter('walk_forward.in_sample_days', `in_sample_days + out_of_sample_days (${walkForward.in_sample_days + walkForward.out_of_sample_days}) exceed the range's ${days} days`)
  }
}

/** A combination as a run takes it: the template's params, and the swept exits keys as decimal strings. */
interface ConfigurationParts {
  params: Record<string, unknown>
  swept: Record<string, string>
}

function configurationParts(combination: Combination): ConfigurationParts {
  const { params, swept } = splitConfiguration(combination)
  return { params, swept: Object.fromEntries(Object.entries(swept).map(([key, value]) => [key, exitText(value)!])) }
}

/** A swept exits key names a field that can be swept, and its grid values or random bounds are numbers or strings. */
function checkExitKey(input: SweepCreate, name: string, field: string): void {
  if (!exitFieldOf(name)) {
    throw invalidParameter(field, `${name} cannot be swept; the exits a sweep searches are ${SWEPT_EXIT_FIELDS.map((one) => `exits.${one}`).join(', ')}`)
  }
  const values = input.grid ? input.grid[name]! : [input.random!.space[name]!.min, input.random!.space[name]!.max]
  if (values.some((value) => exitText(value) === undefined)) throw invalidParameter(field, `${field} takes fractions, as numbers (0.02) or decimal strings ("0.02")`)
}

/**
 * A random search's exits bounds checked as exits: every swept field at its min, then at its max, over
 * the base's exits (errors name random.space.exits.<field>.min or .max). A grid's values are checked
 * configuration by configuration.
 */
function checkExitRanges(input: SweepCreate, base: JobConfig): void {
  const space = input.random?.space ?? {}
  const keys = Object.keys(space).filter(isExitKey)
  if (keys.length === 0) return
  for (const bound of ['min', 'max'] as const) {
    const swept = Object.fromEntries(keys.map((key) => [key, exitText(space[key]![bound])!]))
    const problem = sweptExitsProblem(base.exits, swept, (key) => `random.space.${key}.${bound}`)
    if (problem) throw refusal(problem)
  }
}
