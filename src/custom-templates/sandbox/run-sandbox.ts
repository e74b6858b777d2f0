import type { SymbolRules } from '../../engine/types.js'
import type { ClosedBar, FundingEvent } from '../../live/brokers/broker.js'
import type { SingleSymbolSignal, SingleSymbolTemplate } from '../../templates/types.js'
import type { CustomTemplateVersion } from '../queries.js'
import { customTemplateBounds } from './custom-template.js'
import { jobBudgetMs, SANDBOX_LIMITS } from './limits.js'
import { SandboxWorker } from './sandbox-worker.js'
import { StrategyError } from './strategy-error.js'

/** What a run of a custom template needs to start its module. */
export interface RunModule {
  version: CustomTemplateVersion
  seed: number
  params: Record<string, unknown>
  symbol: string
  timeframe: string
  intervalMs: number
  rules: SymbolRules
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
      const source = { id: module.version.id, version: module.version.version, description: module.version.description, timeframe: module.timeframe }
      const request = { type: 'open', code: module.version.compiled.code, seed: module.seed, source, params: module.params, symbol: module.symbol, intervalMs: module.intervalMs, rules: module.rules } as const
      const { warmup } = await worker.request<{ warmup: number }>(request, SANDBOX_LIMITS.hardCallMs)
      return new RunSandbox(worker, module.version, warmup, () => this.open--)
    } catch (error) {
      this.open--
      await worker.close()
      throw error
    }
  }
}

/**
 * One run's module in its own sandbox thread, fed the closed bars the run acts on, in order, before the
 * run's broker asks for the targets: the broker's template reads what the module answered. The module
 * code path is the backtest's (CustomSignal over a growing series, in sandbox-thread.ts).
 */
export class RunSandbox {
  readonly template: SingleSymbolTemplate
  private targets = new Float64Array(1024)
  private fed = 0
  private closed = false

  constructor(
    private readonly worker: SandboxWorker,
    version: CustomTemplateVersion,
    readonly warmup: number,
    private readonly release: () => void,
  ) {
    this.template = fedTemplate(version, warmup, {
      onBar: (i) => {
        if (!(i < this.fed)) throw new RangeError(`the run asked for the target of bar ${i} before its module was fed it`)
        return this.targets[i]!
      },
    })
  }

  /** Feeds the module `bars` (and their funding); StrategyError when it fails or overruns its time. */
  async feed(bars: readonly ClosedBar[], funding: readonly FundingEvent[]): Promise<void> {
    if (bars.length === 0) return
    const limit = bars.length === 1 ? SANDBOX_LIMITS.hardCallMs : jobBudgetMs(bars.length)
    const answered = await this.worker.request<number[]>({ type: 'feed', bars: [...bars], funding: [...funding] }, limit)
    if (this.fed + answered.length > this.targets.length) {
      const grown = new Float64Array(Math.max(this.targets.length * 2, this.fed + answered.length))
      grown.set(this.targets.subarray(0, this.fed))
      this.targets = grown
    }
    this.targets.set(answered, this.fed)
    this.fed += answered.length
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
  if (version.description.multiSymbol) throw new StrategyError('STRATEGY_ERROR', `runs of many-symbol modules (${version.id}) are not supported yet; backtest it instead`)
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

/** A run's template where no module runs (a pause's close, a resume's carried state): asking it for a target is a bug. */
export function detachedTemplate(version: CustomTemplateVersion): SingleSymbolTemplate {
  const refuse = (): number => {
    throw new RangeError(`template ${version.id} is not running here`)
  }
  return fedTemplate(version, version.description.warmup, { onBar: refuse })
}
