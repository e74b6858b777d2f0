import { parentPort } from 'node:worker_threads'
import type { SymbolRules } from '../../engine/types.js'
import { AppError } from '../../http/errors.js'
import type { ClosedBar, FundingEvent } from '../../live/brokers/broker.js'
import { resolveParams } from '../../templates/validate.js'
import type { MultiSymbolSignal, SingleSymbolSignal } from '../../templates/types.js'
import { compileModule } from './compile-module.js'
import type { ModuleDescription, ModuleLanguage, ResolvedBatch, ResolvedOrRefused } from './contract.js'
import { type CustomTemplateSource, customTemplate } from './custom-template.js'
import { inspectModule } from './inspect-module.js'
import { GrowingSeries } from '../../engine/growing-series.js'
import { loadSmokeData, type SmokeData } from './smoke-bars.js'
import { sandboxFailure, StrategyError } from './strategy-error.js'
import { StrategyInstance } from './strategy-instance.js'
import { overValidateBudget } from './validate-budget.js'

/**
 * A sandbox thread: runs users' modules for the API (inspect an upload, resolve params) and, in a run's
 * own thread, one dry or live run's module fed bar by bar. Its parent (sandbox-worker.ts) holds the
 * wall-clock watchdog and terminates this thread on overrun: nothing here needs to be interruptible.
 */
export type SandboxRequest =
  | { type: 'inspect'; source: string; language: ModuleLanguage; file?: string }
  | { type: 'resolve'; code: string; file?: string; description: ModuleDescription; paramsList: unknown[]; budgetMs?: number }
  | { type: 'open'; code: string; seed: number; source: CustomTemplateSource; params: Record<string, unknown>; symbols: string[]; intervalMs: number; rules: SymbolRules[] }
  | { type: 'feed'; bars: ClosedBar[]; funding: FundingEvent[] }
  | { type: 'steps'; steps: FedStep[]; funding: FundingEvent[][] }

/** A many-symbol run's step as its sandbox is fed it: each symbol's bar at the step, or null. */
export interface FedStep {
  openTime: number
  bars: (ClosedBar | null)[]
}

/**
 * A run's module's answer for the bars of one feed (or one step): its targets, and its levels ([stop, take
 * profit] per bar or symbol: NaN keep, 0 remove, > 0 a price) only when it stated any.
 */
export interface FedAnswer {
  targets: number[]
  levels?: number[]
}

export type SandboxFailure = { kind: 'invalid'; field?: string; message: string } | { kind: 'strategy'; code: StrategyError['code']; message: string }
export type SandboxReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: SandboxFailure }

const port = parentPort
if (!port) throw new Error('sandbox-thread must run in a worker thread')

let smoke: SmokeData | undefined
/** The run this thread serves ('open'), fed by 'feed'. */
let session: { series: GrowingSeries; signal: SingleSymbolSignal } | undefined
/** A many-symbol run this thread serves ('open'), stepped by 'steps'. */
let multiSession: { series: GrowingSeries[]; signal: MultiSymbolSignal } | undefined

port.on('message', async ({ id, request }: { id: number; request: SandboxRequest }) => {
  try {
    port.postMessage({ id, ok: true, value: await handle(request) } satisfies SandboxReply)
  } catch (error) {
    port.postMessage({ id, ok: false, error: failure(error) } satisfies SandboxReply)
    // A module that failed may have left its instance poisoned (research fact 2): a session thread ends.
    if (session || multiSession) process.exit(0)
  }
})

port.postMessage('ready')

async function handle(request: SandboxRequest): Promise<unknown> {
  switch (request.type) {
    case 'inspect': {
      // Types are stripped here, not in the main thread: parsing a hostile 256 KiB source is bounded by the watchdog.
      const compiled = compileModule(request.source, request.language)
      smoke ??= loadSmokeData()
      return { compiled, description: await inspectModule(compiled.code, smoke, request.file) }
    }
    case 'resolve':
      return resolve(request.code, request.description, request.paramsList, request.budgetMs, request.file)
    case 'open':
      return open(request)
    case 'feed':
      return feed(request.bars, request.funding)
    case 'steps':
      return steps(request.steps, request.funding)
  }
}

/**
 * Params with defaults applied, checked by the schema and the module's validate(), with their warm-up:
 * many on one instance of the module (loading it is most of the cost), each resolved or the 400 it
 * would get. The module failing (a throw, a call over its budget) fails them all, as it would fail one.
 * With `budgetMs` (what is left of the submission's ValidateBudget) no call runs past it, loading the
 * module included, and running out is the submission's 400; the time taken is answered, to be charged.
 */
async function resolve(code: string, description: ModuleDescription, paramsList: unknown[], budgetMs: number | undefined, file: string | undefined): Promise<ResolvedBatch> {
  const started = performance.now()
  const deadline = budgetMs === undefined ? undefined : Date.now() + budgetMs
  const overBudget = (error?: unknown) => deadline !== undefined && Date.now() >= deadline && (error === undefined || (error instanceof StrategyError && error.code === 'STRATEGY_TIMEOUT'))
  let instance: StrategyInstance | undefined
  try {
    instance = await StrategyInstance.load(code, 0, { ...(deadline === undefined ? {} : { deadline }), ...(file === undefined ? {} : { file }) })
    const template = customTemplate({ id: 'the module', version: 0, description, timeframe: '1h' }, instance)
    const answers = paramsList.map((params): ResolvedOrRefused => {
      if (overBudget()) throw overValidateBudget()
      const resolved = resolveParams(template, params)
      if (!resolved.ok) return { refused: resolved.problem }
      return { params: resolved.value, warmup: template.warmupBars(resolved.value as never, 0) }
    })
    return { answers, spentMs: performance.now() - started }
  } catch (error) {
    // The interrupt at the deadline reads as the call's own timeout: it is the submission's budget.
    throw overBudget(error) ? overValidateBudget() : error
  } finally {
    instance?.dispose()
  }
}

async function open(request: Extract<SandboxRequest, { type: 'open' }>): Promise<{ warmup: number }> {
  const instance = await StrategyInstance.load(request.code, request.seed, request.source.file === undefined ? {} : { file: request.source.file })
  const template = customTemplate(request.source, instance)
  const series = request.symbols.map((symbol) => new GrowingSeries(symbol, request.intervalMs))
  const context = { bars: series.map((g) => g.bars), funding: series.map((g) => g.funding), rules: request.rules }
  if (template.multiSymbol) multiSession = { series, signal: template.create(context, request.params as never) }
  else session = { series: series[0]!, signal: template.create(context, request.params as never) }
  return { warmup: template.warmupBars(request.params as never, request.intervalMs) }
}

/** Appends closed bars (and their funding) and answers the module's targets and levels for them, warm-up masked. */
function feed(bars: ClosedBar[], funding: FundingEvent[]): FedAnswer {
  if (!session) throw new Error('feed before open')
  const { series, signal } = session
  series.addFunding(funding)
  const from = series.length
  for (const bar of bars) series.append(bar)
  const targets = new Float64Array(bars.length)
  const levels = new Float64Array(2 * bars.length).fill(Number.NaN)
  if (bars.length > 0) {
    if (signal.onBars) {
      signal.onBars(from, series.length, targets, levels)
    } else {
      for (let k = 0; k < bars.length; k++) {
        signal.levels?.fill(Number.NaN)
        targets[k] = signal.onBar(from + k)
        if (signal.levels) levels.set(signal.levels, 2 * k)
      }
    }
  }
  return fedAnswer(targets, levels)
}

/**
 * Appends each step's bars (and the funding events) and answers, per step, the module's targets by symbol
 * index (NaN: keep) and its levels, exactly as the engine's MultiSymbolStepper asks a backtest's module.
 */
function steps(fed: FedStep[], funding: FundingEvent[][]): FedAnswer[] {
  if (!multiSession) throw new Error('steps before open')
  const { series, signal } = multiSession
  series.forEach((g, s) => g.addFunding(funding[s] ?? []))
  const at = new Int32Array(series.length)
  const targets = new Float64Array(series.length)
  const levels = signal.levels ?? new Float64Array(2 * series.length)
  return fed.map((step) => {
    step.bars.forEach((bar, s) => (at[s] = bar ? series[s]!.append(bar) : -1))
    targets.fill(Number.NaN)
    levels.fill(Number.NaN)
    signal.onStep(at, targets)
    return fedAnswer(targets, levels)
  })
}

/** Targets and levels as a reply carries them: levels only when one is stated. */
function fedAnswer(targets: Float64Array, levels: Float64Array): FedAnswer {
  return levels.some((level) => level === level) ? { targets: Array.from(targets), levels: Array.from(levels) } : { targets: Array.from(targets) }
}

function failure(error: unknown): SandboxFailure {
  if (error instanceof StrategyError) return { kind: 'strategy', code: error.code, message: error.message }
  if (error instanceof AppError) return { kind: 'invalid', field: error.field, message: error.message }
  // A WebAssembly trap is the module's failure too: STRATEGY_OOM only when memory ran out.
  const { code, message } = sandboxFailure(error)
  return { kind: 'strategy', code, message }
}
