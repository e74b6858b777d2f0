import type { RunSandbox } from '../../custom-templates/sandbox/run-sandbox.js'
import type { KlineRow } from '../../backtests/history-store.js'
import type { SymbolRules } from '../../engine/types.js'
import type { MultiSymbolTemplate } from '../../templates/types.js'
import type { ClosedBar, FundingEvent } from '../brokers/broker.js'
import { DecisionLatency } from './decision-latency.js'
import { MultiPaperBroker, type StepOutcome } from '../brokers/multi-paper-broker.js'
import { PAPER_FEES } from '../brokers/paper-setup.js'
import type { LiveState } from '../exchange/live-orders.js'
import { LiveSymbols } from '../exchange/live-symbols.js'
import { RunFailure } from '../exchange/run-failure.js'
import type { UserStreamEvent } from '../exchange/user-data-streams.js'
import { multiPaperSetup, type MultiRunState } from '../multi-run.js'
import { nextIntent, nextTradeId, orderStatus, type RunRow } from '../queries.js'
import { clientOrderIdPrefix, type OutcomeCounters } from '../record-outcome.js'
import { type PendingOrders, stepRows } from '../record-step.js'
import { intervalMs } from '../timeframes.js'
import { RunFunding } from './run-funding.js'
import { RunMinutes } from './run-minutes.js'
import { type Step, StepAssembly } from './step-assembly.js'
import type { RunnerDeps } from './runner-deps.js'
import { warmupBars, warmupFunding } from './warm-up.js'
import { symbolProtection } from '../protection/symbol-protection.js'
import { feedModule, openRunTemplate, StepChain, stepFailed } from './run-steps.js'

/**
 * How long (wall time) a step waits, after its first bar arrived, for the bars of its other symbols before
 * REST is asked for them and the step goes with what there is (docs/decisions/live.md, "Multi-symbol runs").
 */
export const STEP_WAIT_MS = 5_000

/** The largest klines page. */
const PAGE = 1_500

/** At most this many steps are replayed when a run is taken over (a week of 1m steps: 7 pages of klines per symbol). */
const REPLAY_STEPS = 10_080

/** Warm-up and backfill state saved beside the broker's: the first step the run may act on; a live run's order path per symbol. */
interface MultiRunnerState extends MultiRunState {
  warmupFrom?: number
  firstActive?: number
  live?: Record<string, LiveState>
}

/**
 * One deployed many-symbol strategy in this process: warms its template up on every symbol's recent closed
 * klines, follows each symbol's kline stream, assembles the bars into time steps (StepAssembly) and steps
 * the engine's MultiSymbolStepper (the paper broker) once per step, in order, exactly as simulateMulti steps
 * a backtest over the same bars. A live run takes each step's targets out of the stepper and sends them as
 * one order per symbol, each symbol with its own order path (LiveOrders: intent committed before sending,
 * unknown outcomes looked up, reconciliation with the exchange's position before trading).
 */
export class MultiSymbolRunner {
  private broker!: MultiPaperBroker
  private pendingOrders: PendingOrders = {}
  private readonly unsubscribes: (() => void)[] = []
  private readonly chain = new StepChain(() => this.stopped, (error) => stepFailed(error, this, this.deps))
  private stopped = false
  private readonly interval: number
  private readonly funding: RunFunding[]
  private readonly assembly: StepAssembly
  private extra: { warmupFrom?: number; firstActive?: number } = {}
  private counters: OutcomeCounters = { intent: 1, trade: 1 }
  private sandbox: RunSandbox | undefined
  /** Each symbol's filters: prices and quantities are written at its tick and step. */
  private rules: SymbolRules[] = []
  /** The bounded wait for the next step's missing bars: its step's open time and timer. */
  private wait: { openTime: number; timer: NodeJS.Timeout } | undefined
  /** A live run's exchange side; undefined for a dry run. */
  private live: LiveSymbols | undefined
  private unsubscribeUser: (() => void) | undefined
  /** A dry run's protective exits: each symbol's minutes of each step they are examined on. */
  private minutes: RunMinutes[] = []
  private readonly decisions: DecisionLatency

  constructor(
    readonly run: RunRow,
    private readonly deps: RunnerDeps,
    private readonly stepWaitMs = STEP_WAIT_MS,
  ) {
    this.interval = intervalMs(run.timeframe)
    this.funding = run.symbols.map((symbol) => new RunFunding(deps.history, symbol, this.interval))
    this.assembly = new StepAssembly(run.symbols.length, this.interval)
    this.decisions = new DecisionLatency(run.dry_run, this.interval, deps.now)
  }

  async start(): Promise<void> {
    const { run, deps } = this
    const rules = await Promise.all(run.symbols.map((symbol) => deps.rules(symbol, run)))
    this.rules = rules
    const opened = await openRunTemplate(this, deps, this.interval, rules)
    if (!opened) return
    this.sandbox = opened.sandbox
    const template = opened.template as MultiSymbolTemplate
    // Stopped while its start awaited (the pool's shutdown, a lost lease): it starts nothing more, and stop()
    // again closes the sandbox thread that arrived after the first stop (else it keeps the process alive).
    if (this.stopped) return this.stop()
    const setup = multiPaperSetup(run, template, rules, PAPER_FEES)
    const state = run.state as unknown as MultiRunnerState | null
    this.broker = new MultiPaperBroker(setup, state?.broker)
    this.pendingOrders = state?.pendingOrders ?? {}
    this.extra = { warmupFrom: state?.warmupFrom, firstActive: state?.firstActive }
    const warmup = this.sandbox ? this.sandbox.warmup : template.warmupBars(setup.params as never, this.interval)
    const kind = this.broker.minuteKind
    if (kind) this.minutes = run.symbols.map((symbol) => new RunMinutes(deps, symbol, this.interval, kind))

    // Subscribe first so no closed bar is lost while history loads; the chain orders everything.
    run.symbols.forEach((symbol, s) => {
      this.unsubscribes.push(
        deps.streams.subscribe(symbol, run.timeframe, (event) => {
          if (event.type === 'closed') void this.enqueue(() => this.onBar(s, event.bar))
          else
            void this.enqueue(async () => {
              // After a reconnect the exchange's picture of the symbol comes first: its trading waits until it agrees.
              if (this.live) {
                this.live.useClient(await deps.tradingClient!(run))
                await this.live.reconcile(s)
              }
              await this.backfill()
            })
        }),
      )
    })
    let failed: unknown
    await this.enqueue(async () => {
      try {
        this.counters = { intent: await nextIntent(deps.db, run.strategy_id, run.run), trade: await nextTradeId(deps.db, run.strategy_id) }
        if (!run.dry_run) await this.goLive(rules, state)
        await this.warmUp(warmup)
        this.decisions.warm(this.broker.lastOpenTime)
      } catch (error) {
        failed = error
        throw error
      }
    })
    if (failed !== undefined && !(failed instanceof RunFailure)) {
      this.stop()
      throw failed
    }
  }

  /**
   * A live run's exchange side, before the warm-up (LiveSymbols: one order path per symbol over the run's one
   * ledger), and the account's user stream, subscribed before the start's reconciliation so a change after it
   * reaches the run as an event or a reconnect; its events run through the chain like every step.
   */
  private async goLive(rules: readonly SymbolRules[], state: MultiRunnerState | null): Promise<void> {
    const { run, deps } = this
    if (!deps.tradingClient) throw new Error('this process cannot trade live runs: it holds no master key to open exchange keys')
    const client = await deps.tradingClient(run)
    const broker = this.broker
    const live = new LiveSymbols(this.broker, client, run.symbols, rules, run.leverage, {
      commit: (outcome, settles) => this.commit(outcome, settles),
      pendingOrders: () => this.pendingOrders,
      state: state?.live,
      prefix: clientOrderIdPrefix(run.strategy_id),
      bookedStatus: (id) => orderStatus(deps.db, run.strategy_id, id),
      since: () => (this.extra.firstActive ?? Number.NaN) - this.interval,
      protection: (s, ledger) =>
        symbolProtection({
          db: deps.db,
          owner: deps.owner,
          run,
          symbol: run.symbols[s]!,
          rules: rules[s]!,
          now: deps.now,
          client,
          ledger: { get qty() { return ledger.qty }, get guard() { return broker.guard }, index: s },
        }),
    })
    this.live = live
    if (deps.userStreams && run.exchange_key_id !== null) {
      this.unsubscribeUser = deps.userStreams.subscribe(run.exchange_key_id, client, (event) => {
        const step = live.stepFor(event, () => this.stopped)
        if (step) void this.enqueue(step)
      })
    }
  }

  stop(): void {
    this.stopped = true
    this.unsubscribeUser?.()
    for (const unsubscribe of this.unsubscribes) unsubscribe()
    this.unsubscribes.length = 0
    for (const minutes of this.minutes) minutes.close()
    if (this.wait) clearTimeout(this.wait.timer)
    this.wait = undefined
    void this.sandbox?.close()
  }

  /** Resolves once every queued step is done (tests and shutdown). */
  idle(): Promise<void> {
    return this.chain.idle()
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    return this.chain.enqueue(step)
  }

  /**
   * A fresh run: the newest `steps` closed steps over every symbol, fed to the template only; a backtest
   * starting at the first of them makes the same decisions from then on. A resumed run (a takeover): every
   * step from its warm-up boundary to its last one (up to REPLAY_STEPS), so a template whose state depends on
   * its whole path (a rebalance phase, a module's counters) is where it was, not only its indicators.
   */
  private async warmUp(steps: number): Promise<void> {
    const { run, deps } = this
    const last = this.broker.lastOpenTime
    const resumed = last === last
    const end = resumed ? last + this.interval : Math.floor((await deps.exchangeNow()) / this.interval) * this.interval
    const replayFrom = resumed && this.extra.warmupFrom !== undefined ? Math.max(this.extra.warmupFrom, end - REPLAY_STEPS * this.interval) : undefined
    const windows = await Promise.all(
      run.symbols.map((symbol) =>
        replayFrom === undefined ? warmupBars(deps.history, symbol, run.timeframe, this.interval, steps, end) : this.closedBetween(symbol, replayFrom, end),
      ),
    )
    const times = [...new Set(windows.flatMap((w) => w.closed.map((r) => r.openTime)))].sort((a, b) => a - b)
    if (!resumed) times.pop() // the newest step may still be open
    const kept = replayFrom === undefined ? times.slice(Math.max(0, times.length - steps)) : times
    const from = kept[0] ?? end
    const byTime = windows.map((w) => new Map(w.closed.map((r) => [r.openTime, r])))
    const history: Step[] = kept.map((t) => ({ openTime: t, bars: byTime.map((m) => m.get(t)) }))
    const funding = await Promise.all(this.funding.map((f, s) => warmupFunding(f, windows[s]!.start, end, from)))
    await this.feed(history, funding)
    this.broker.warm(history, funding)
    if (!resumed) this.extra = { warmupFrom: from, firstActive: (kept[kept.length - 1] ?? from - this.interval) + this.interval }
    this.assembly.startAt(resumed ? last + this.interval : this.extra.firstActive!)
    if (this.live) {
      // Every symbol's leverage and margin type, then every symbol reconciled, before the first order (a takeover's too).
      await this.live.prepare()
      await this.live.reconcileAll(() => this.stopped)
    }
    if (resumed) await this.backfill()
  }

  /** A symbol's bars with from ≤ open time < end, page by page (a resumed run's replay). */
  private async closedBetween(symbol: string, from: number, end: number): Promise<{ start: number; closed: KlineRow[] }> {
    const closed: KlineRow[] = []
    for (let cursor = from; cursor < end; ) {
      const limit = Math.min(PAGE, Math.ceil((end - cursor) / this.interval))
      const page = await this.deps.history.klines(symbol, this.run.timeframe, cursor, Math.min(end, cursor + PAGE * this.interval) - 1, limit)
      closed.push(...page.filter((r) => r.openTime >= cursor && r.openTime < end))
      if (page.length < limit) break
      cursor = page[page.length - 1]!.openTime + this.interval
    }
    return { start: from, closed }
  }

  /**
   * After a reconnect (or at a resume): every step closed by the exchange's clock is read over REST; all
   * but the newest are final (REST may not have the newest bar of every symbol yet: it waits for the stream).
   */
  private async backfill(): Promise<void> {
    const lastClosed = Math.floor((await this.deps.exchangeNow()) / this.interval) * this.interval - this.interval
    const next = this.assembly.next
    if (next === next && next <= lastClosed) {
      await this.read(next, lastClosed, this.run.symbols.map((_, s) => s))
      this.assembly.settle(lastClosed - this.interval)
    }
    await this.pump()
  }

  private async onBar(s: number, bar: ClosedBar): Promise<void> {
    // A bar whose step was already acted on without it (it came after the wait) is not acted on.
    if (!this.assembly.add(s, bar)) return
    await this.pump()
  }

  /** Acts on every step that is ready, reads what the stream lost, and arms the wait for a step still missing bars. */
  private async pump(): Promise<void> {
    for (;;) {
      if (this.stopped) return
      const status = this.assembly.status()
      if (status === 'complete' || status === 'final') {
        const step = this.assembly.take()
        if (this.wait && this.wait.openTime <= step.openTime) this.clearWait()
        if (step.bars.some((bar) => bar !== undefined)) await this.act(step)
        continue
      }
      if (status === 'overtaken') {
        const through = this.assembly.frontier()
        await this.read(this.assembly.next, through, this.assembly.missing(through))
        this.assembly.settle(through)
        continue
      }
      if (status === 'waiting' && !this.wait) {
        const openTime = this.assembly.next
        this.wait = { openTime, timer: setTimeout(() => void this.enqueue(() => this.waited(openTime)), this.stepWaitMs) }
      }
      return
    }
  }

  /** The wait for step `openTime` ran out: REST is asked for the missing bars of every step heard so far; they go with what there is. */
  private async waited(openTime: number): Promise<void> {
    if (this.wait?.openTime !== openTime) return
    this.wait = undefined
    const through = this.assembly.newest()
    if (through >= this.assembly.next) {
      await this.read(this.assembly.next, through, this.assembly.missing(through))
      this.assembly.settle(through)
    }
    await this.pump()
  }

  private clearWait(): void {
    clearTimeout(this.wait!.timer)
    this.wait = undefined
  }

  /** Reads symbols' closed bars with from ≤ open time ≤ through over REST into the assembly. */
  private async read(from: number, through: number, symbols: readonly number[]): Promise<void> {
    await Promise.all(
      symbols.map(async (s) => {
        for (let cursor = from; cursor <= through; ) {
          const limit = Math.min(PAGE, Math.floor((through - cursor) / this.interval) + 1)
          const page: KlineRow[] = await this.deps.history.klines(this.run.symbols[s]!, this.run.timeframe, cursor, Math.min(through + this.interval, cursor + PAGE * this.interval) - 1, limit)
          for (const row of page) if (row.openTime >= cursor && row.openTime <= through) this.assembly.add(s, row)
          if (page.length < limit) break
          cursor = page[page.length - 1]!.openTime + this.interval
        }
      }),
    )
  }

  private async act(step: Step): Promise<void> {
    if (this.stopped) return
    // Read first, as StrategyRunner does: a read that fails leaves the module unfed and the step's funding not yet taken.
    const minutes = await Promise.all(
      this.minutes.map((m, s) => (step.bars[s] !== undefined && this.broker.minutesWanted(s) ? m.of(step.openTime) : undefined)),
    )
    for (const m of this.minutes) m.forget(step.openTime + this.interval)
    const funding = await Promise.all(this.funding.map((f) => f.forBar(step.openTime)))
    await this.feed([step], funding)
    if (this.live) return this.live.act(step, funding, step.openTime + this.interval)
    await this.commit(this.broker.onStep(step, funding, minutes))
  }

  /** Feeds a custom module the steps the broker is about to take; its failure ends the run in error. */
  private async feed(steps: readonly Step[], funding: readonly (readonly FundingEvent[])[]): Promise<void> {
    const sandbox = this.sandbox
    if (sandbox) await feedModule(() => sandbox.feedSteps(steps, funding))
  }

  /**
   * Writes one step's (or one booking's) rows and the runner's state through the pool's group commit, fenced
   * by the lease. `settles` names, per symbol, the order a booking's fill belongs to (default: the symbol's
   * pending one). Returns the new intents by symbol, or undefined when the run is no longer this process's.
   */
  private async commit(outcome: StepOutcome, settles?: PendingOrders): Promise<PendingOrders | undefined> {
    const { run, deps } = this
    const now = new Date(deps.now())
    const pending = settles ? { ...this.pendingOrders, ...settles } : this.pendingOrders
    const last = this.broker.lastOpenTime
    const closeTime = last + this.interval
    const targets = Float64Array.from(outcome.symbols, (o) => o.newTarget)
    const sizedQtys = last === last && targets.some((t) => t === t) ? this.broker.desiredQtys(targets, closeTime) : undefined
    const { rows, pendingOrders, counters } = stepRows({ run, now, closeTime, sizedQtys, totals: this.broker.totals(), rules: this.rules }, outcome, pending, this.counters)
    const state: MultiRunnerState = { broker: this.broker.snapshot(), pendingOrders, ...this.extra, ...(this.live ? { live: this.live.state() } : {}) }
    const ok = await deps.commits.commit({ strategyId: run.strategy_id, run: run.run, rows, state: state as unknown as Record<string, unknown>, lastBarAt: last === last ? new Date(last) : null })
    if (!ok) {
      // Paused or taken over: the saved state is the truth; this runner stops without acting again.
      this.stop()
      return undefined
    }
    this.counters = counters
    this.pendingOrders = pendingOrders
    this.decisions.committed(last)
    return Object.fromEntries(outcome.symbols.filter((o) => o.newTarget === o.newTarget).map((o) => [o.symbol, pendingOrders[o.symbol]!]))
  }
}
