import type { SymbolRules } from '../../engine/types.js'
import type { ClosedBar, FundingEvent } from '../../live/brokers/broker.js'
import type { Step } from '../../live/runner/step-assembly.js'
import type { MultiSymbolSignal, MultiSymbolTemplate, SingleSymbolSignal, SingleSymbolTemplate, Template } from '../../templates/types.js'
import type { CustomTemplateVersion } from '../queries.js'
import { customTemplateBounds } from './custom-template.js'
import { jobBudgetMs, SANDBOX_LIMITS } from './limits.js'
import { SandboxWorker } from './sandbox-worker.js'
import type { FedAnswer } from './sandbox-thread.js'
import { StrategyError } from './strategy-error.js'

/** What a run of a custom template needs to start its module. */
export interface RunModule {
  version: CustomTemplateVersion
  seed: number
  params: Record<string, unknown>
  /** One symbol, or a many-symbol module's symbols in the run's order. */
  symbols: string[]
  timeframe: string
  intervalMs: number
  rules: SymbolRules[]
}

/**
 * The sandboxes of this node's runs: at most SANDBOX_LIMITS.sandboxesPerNode threads at once; a run that
 * finds none free fails to start and is claimed again later (here or on another node).
 */
export class RunSandboxes {
  private open = 0

  constructor(private readonly limit: number = SANDBOX_LIMITS.sandboxesPerNode) {}

  async start(module: RunModule): Promise<RunSandbox> {
    if (this.open >= this.limit) throw new Error(`this node runs its limit of ${this.limit} custom-template sandboxes`)
    this.open++
    const worker = new SandboxWorker()
    try {
      const source = { id: module.version.id, version: module.version.version, description: module.version.description, timeframe: module.timeframe, file: module.version.compiled.file }
      const request = { type: 'open', code: module.version.compiled.code, seed: module.seed, source, params: module.params, symbols: module.symbols, intervalMs: module.intervalMs, rules: module.rules } as const
      const { warmup } = await worker.request<{ warmup: number }>(request, SANDBOX_LIMITS.hardCallMs)
      return new RunSandbox(worker, module.version, warmup, () => this.open--, module.symbols.length)
    } catch (error) {
      this.open--
      await worker.close()
      throw error
    }
  }
}

/**
 * One run's module in its own sandbox thread, fed the closed bars the run acts on, in order, before the
 * run's broker asks for the targets: the broker's template reads what the module answered, targets and
 * levels (its signal has `levels`, as a backtest's CustomSignal does). The module code path is the
 * backtest's (CustomSignal over a growing series, in sandbox-thread.ts).
 */
export class RunSandbox {
  readonly template: Template
  private targets = new Float64Array(1024)
  /** [stop, take profit] per bar fed, as the module stated them (NaN keep, 0 remove, > 0 a price). */
  private levels = new Float64Array(2048).fill(Number.NaN)
  private fed = 0
  /** A many-symbol module's answers per step not yet asked for by the run's broker, oldest first. */
  private readonly stepAnswers: FedAnswer[] = []
  private stepsAsked = 0
  private closed = false

  constructor(
    private readonly worker: SandboxWorker,
    version: CustomTemplateVersion,
    readonly warmup: number,
    private readonly release: () => void,
    symbols: number,
  ) {
    if (version.description.multiSymbol) {
      const levels = new Float64Array(2 * symbols).fill(Number.NaN)
      this.template = fedMultiTemplate(version, warmup, { levels, onStep: (_at, targets) => this.answerStep(targets, levels) })
    } else {
      const levels = new Float64Array(2)
      this.template = fedTemplate(version, warmup, {
        levels,
        onBar: (i) => {
          if (!(i < this.fed)) throw new RangeError(`the run asked for the target of bar ${i} before its module was fed it`)
          levels[0] = this.levels[2 * i]!
          levels[1] = this.levels[2 * i + 1]!
          return this.targets[i]!
        },
      })
    }
  }

  /** Feeds a many-symbol module `steps` (and each symbol's funding events); StrategyError when it fails or overruns its time. */
  async feedSteps(steps: readonly Step[], funding: readonly (readonly FundingEvent[])[]): Promise<void> {
    if (steps.length === 0) return
    const limit = steps.length === 1 ? SANDBOX_LIMITS.hardCallMs : jobBudgetMs(steps.length * steps[0]!.bars.length)
    const fed = steps.map((step) => ({ openTime: step.openTime, bars: step.bars.map((bar) => bar ?? null) }))
    const answered = await this.worker.request<FedAnswer[]>({ type: 'steps', steps: fed, funding: funding.map((events) => [...events]) }, limit)
    this.stepAnswers.push(...answered)
  }

  /** The run's broker steps the template: the module's answer at that step, in order (targets, and levels into `levels`). */
  private answerStep(targets: Float64Array, levels: Float64Array): boolean {
    const answer = this.stepAnswers.shift()
    if (!answer) throw new RangeError(`the run asked for the targets of step ${this.stepsAsked} before its module was fed it`)
    this.stepsAsked++
    if (answer.levels) levels.set(answer.levels)
    let any = false
    answer.targets.forEach((target, s) => {
      if (target === target) {
        targets[s] = target
        any = true
      }
    })
    return any
  }

  /** Feeds the module `bars` (and their funding); StrategyError when it fails or overruns its time. */
  async feed(bars: readonly ClosedBar[], funding: readonly FundingEvent[]): Promise<void> {
    if (bars.length === 0) return
    const limit = bars.length === 1 ? SANDBOX_LIMITS.hardCallMs : jobBudgetMs(bars.length)
    const answered = await this.worker.request<FedAnswer>({ type: 'feed', bars: [...bars], funding: [...funding] }, limit)
    const count = answered.targets.length
    if (this.fed + count > this.targets.length) {
      const size = Math.max(this.targets.length * 2, this.fed + count)
      const grown = new Float64Array(size)
      grown.set(this.targets.subarray(0, this.fed))
      this.targets = grown
      const grownLevels = new Float64Array(2 * size).fill(Number.NaN)
      grownLevels.set(this.levels.subarray(0, 2 * this.fed))
      this.levels = grownLevels
    }
    this.targets.set(answered.targets, this.fed)
    if (answered.levels) this.levels.set(answered.levels, 2 * this.fed)
    this.fed += count
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.release()
    await this.worker.close()
  }
}

/**
 * A custom template as a run's broker sees it, its targets coming from elsewhere (`signal`): the module
 * itself runs in a sandbox thread. Params were resolved when the strategy was deployed; the schema checks
 * them again here without running the module.
 */
export function fedTemplate(version: CustomTemplateVersion, warmup: number, signal: SingleSymbolSignal): SingleSymbolTemplate {
  if (version.description.multiSymbol) throw new StrategyError('STRATEGY_ERROR', `${version.id} is a many-symbol module; its runs step it (fedMultiTemplate)`)
  return {
    id: version.id,
    description: `custom template ${version.id} version ${version.version}`,
    schema: version.description.paramsSchema as never,
    minCapital: customTemplateBounds(false).minCapital,
    multiSymbol: false,
    warmupBars: () => warmup,
    create: () => signal,
  }
}

/** fedTemplate for a many-symbol module: the run's broker steps `signal`, which answers what the module answered at that step. */
export function fedMultiTemplate(version: CustomTemplateVersion, warmup: number, signal: MultiSymbolSignal): MultiSymbolTemplate {
  const bounds = customTemplateBounds(true)
  return {
    id: version.id,
    description: `custom template ${version.id} version ${version.version}`,
    schema: version.description.paramsSchema as never,
    minCapital: bounds.minCapital,
    minSymbols: bounds.minSymbols,
    multiSymbol: true,
    warmupBars: () => warmup,
    create: () => signal,
  }
}

/** A run's template where no module runs (a pause's close, a resume's carried state): asking it for a target is a bug. */
export function detachedTemplate(version: CustomTemplateVersion): Template {
  const refuse = (): never => {
    throw new RangeError(`template ${version.id} is not running here`)
  }
  return version.description.multiSymbol
    ? fedMultiTemplate(version, version.description.warmup, { onStep: refuse })
    : fedTemplate(version, version.description.warmup, { onBar: refuse })
}
