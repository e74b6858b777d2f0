import type { SymbolRules } from '../../engine/types.js'
import type { RunSandbox } from '../../custom-templates/sandbox/run-sandbox.js'
import type { SingleSymbolTemplate } from '../../templates/types.js'
import type { BrokerOutcome, ClosedBar, FundingEvent } from '../brokers/broker.js'
import { DecisionLatency } from './decision-latency.js'
import { ExchangeBroker } from '../brokers/exchange-broker.js'
import { PaperBroker, type PaperSetup } from '../brokers/paper-broker.js'
import { RunFailure } from '../exchange/run-failure.js'
import { LiveOrders, type LiveState } from '../exchange/live-orders.js'
import type { UserStreamEvent } from '../exchange/user-data-streams.js'
import { paperSetup } from '../brokers/paper-setup.js'
import { nextIntent, nextTradeId, orderStatus, type RunRow } from '../queries.js'
import { clientOrderIdPrefix, type OutcomeCounters, outcomeRows, type RunState } from '../record-outcome.js'
import { RunFunding } from './run-funding.js'
import { RunMinutes } from './run-minutes.js'
import { warmupBars, warmupFunding } from './warm-up.js'
import { feedModule, openRunTemplate, StepChain, stepFailed } from './run-steps.js'
import type { RunnerDeps } from './runner-deps.js'
import { intervalMs } from '../timeframes.js'
import { type SymbolProtection, symbolProtection } from '../protection/symbol-protection.js'

/** Warm-up and backfill state saved beside the broker's: the first bar the run may act on. */
interface RunnerState extends RunState, LiveState {
  warmupFrom?: number
  firstActive?: number
}

/**
 * One deployed strategy in this process (it holds the run's lease): warms its template up on recent
 * closed klines, follows the kline stream, acts on closed bars only, in order, and backfills over REST
 * the bars it missed (at start, after a reconnect, or when a bar arrives after a gap) before acting again.
 */
export class StrategyRunner {
  private broker!: PaperBroker | ExchangeBroker
  /** A live run's order path (intents sent, unknown outcomes looked up, reconciliation); undefined for a dry run. */
  private live: LiveOrders<BrokerOutcome> | undefined
  private pendingOrder: string | null = null
  private unsubscribe: (() => void) | undefined
  private unsubscribeUser: (() => void) | undefined
  private readonly chain = new StepChain(() => this.stopped, (error) => stepFailed(error, this, this.deps))
  private stopped = false
  private readonly interval: number
  private readonly funding: RunFunding
  private extra: { warmupFrom?: number; firstActive?: number } = {}
  /** The run's next intent and trade numbers: read at start, then kept here (this runner alone writes them while it holds the lease). */
  private counters: OutcomeCounters = { intent: 1, trade: 1 }
  /** The stream bar being acted on, until its first commit reports its timing. */
  private arrival: { openTime: number; receivedAt: number } | undefined
  /** A custom template's module, in its own sandbox thread: fed every bar before the broker acts on it. */
  private sandbox: RunSandbox | undefined
  /** The symbol's filters, read at start: prices and quantities are written at its tick and step. */
  private rules!: SymbolRules
  /** A dry run's protective exits: the minutes of each bar they are examined on. */
  private minutes: RunMinutes | undefined
  /** A live run's protective orders on the exchange. */
  private protection: SymbolProtection | undefined
  private readonly decisions: DecisionLatency

  constructor(
    readonly run: RunRow,
    private readonly deps: RunnerDeps,
  ) {
    this.interval = intervalMs(run.timeframe)
    this.funding = new RunFunding(deps.history, run.symbol, this.interval)
    this.decisions = new DecisionLatency(run.dry_run, this.interval, deps.now)
  }

  async start(): Promise<void> {
    const { run, deps } = this
    const rules = await deps.rules(run.symbol, run)
    this.rules = rules
    const opened = await openRunTemplate(this, deps, this.interval, [rules])
    if (!opened) return
    this.sandbox = opened.sandbox
    const template = opened.template as SingleSymbolTemplate
    // Stopped while its start awaited (the pool's shutdown, a lost lease): it starts nothing more, and stop()
    // again closes the sandbox thread that arrived after the first stop (else it keeps the process alive).
    if (this.stopped) return this.stop()
    const setup = paperSetup(run, template, rules)
    const state = run.state as unknown as RunnerState | null
    const paper = new PaperBroker(setup, state?.broker)
    this.broker = paper
    this.pendingOrder = state?.pendingOrder ?? null
    this.extra = { warmupFrom: state?.warmupFrom, firstActive: state?.firstActive }

    const warmup = this.sandbox ? this.sandbox.warmup : template.warmupBars(setup.params as never, this.interval)
    const kind = paper.minuteKind
    if (kind) this.minutes = new RunMinutes(deps, run.symbol, this.interval, kind)
    // Subscribe first so no closed bar is lost while history loads; the chain orders everything.
    this.unsubscribe = deps.streams.subscribe(run.symbol, run.timeframe, (event) => {
      if (event.type === 'closed') this.enqueue(() => this.onBar(event.bar, event.receivedAt))
      else
        this.enqueue(async () => {
          // After a reconnect the exchange's picture comes first: trading waits until it agrees with ours.
          if (this.live && this.broker instanceof ExchangeBroker) {
            const client = await this.deps.tradingClient!(this.run)
            this.broker.useClient(client)
            this.protection?.useClient(client)
            await this.live.reconcile()
          }
          await this.backfill(Number.POSITIVE_INFINITY)
        })
    })
    let failed: unknown
    await this.enqueue(async () => {
      try {
        await this.begin(run, deps, paper, setup, state, warmup)
      } catch (error) {
        failed = error
        throw error
      }
    })
    // A start that failed (exchange unreachable, budget spent) must not leave a runner that never acts:
    // it stops and the pool lets the run be claimed again. A RunFailure already ended the run.
    if (failed !== undefined && !(failed instanceof RunFailure)) {
      this.stop()
      throw failed
    }
  }

  /** The first step in the chain: a live run's broker (a refused key moves the strategy to error like any later step), then the warm-up. */
  private async begin(run: RunRow, deps: RunnerDeps, paper: PaperBroker, setup: PaperSetup, state: RunnerState | null, warmup: number): Promise<void> {
    this.counters = { intent: await nextIntent(deps.db, run.strategy_id, run.run), trade: await nextTradeId(deps.db, run.strategy_id) }
    if (!run.dry_run) {
      if (!deps.tradingClient) throw new Error('this process cannot trade live runs: it holds no master key to open exchange keys')
      const client = await deps.tradingClient(run)
      const broker = new ExchangeBroker(paper, client, setup)
      this.broker = broker
      this.protection = symbolProtection({
        db: deps.db,
        owner: deps.owner,
        run,
        symbol: run.symbol,
        rules: this.rules,
        now: deps.now,
        client,
        ledger: { get qty() { return broker.qty }, get guard() { return paper.guard }, index: 0 },
      })
      this.live = new LiveOrders(broker, {
        protection: this.protection,
        commit: (outcome, settles) => this.commit(outcome, settles),
        pendingOrder: () => this.pendingOrder,
        state: state ?? undefined,
        prefix: clientOrderIdPrefix(run.strategy_id),
        bookedStatus: (id) => orderStatus(deps.db, run.strategy_id, id),
        since: () => (this.extra.firstActive ?? Number.NaN) - this.interval,
      })
      // Before the start's reconciliation: a change after it reaches the run as an event or a reconnect.
      if (deps.userStreams && run.exchange_key_id !== null) this.unsubscribeUser = deps.userStreams.subscribe(run.exchange_key_id, client, (event) => this.onUserEvent(event))
    }
    await this.warmUp(warmup)
    this.decisions.warm(this.broker.lastOpenTime)
  }

  stop(): void {
    this.stopped = true
    this.unsubscribe?.()
    this.unsubscribeUser?.()
    this.minutes?.close()
    void this.sandbox?.close()
  }

  /** Feeds a custom module the bars the broker is about to act on; its failure ends the run in error. */
  private async feed(bars: readonly ClosedBar[], funding: readonly FundingEvent[]): Promise<void> {
    const sandbox = this.sandbox
    if (sandbox) await feedModule(() => sandbox.feed(bars, funding))
  }

  /** Resolves once every queued step is done (tests and shutdown). */
  idle(): Promise<void> {
    return this.chain.idle()
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    return this.chain.enqueue(step)
  }

  /** The user data stream, through the chain like every step: settles and checks never run beside a bar. */
  private onUserEvent(event: UserStreamEvent): void {
    const live = this.live
    if (!live) return
    if (event.type === 'connected') void this.enqueue(async () => void (await live.reconcile()))
    else if (event.type === 'order' && event.update.symbol === this.run.symbol) void this.enqueue(() => live.onOrderUpdate(event.update))
    else if (event.type === 'algo' && event.update.symbol === this.run.symbol) void this.enqueue(() => live.onAlgoUpdate(event.update))
    else if (event.type === 'position' && event.symbol === this.run.symbol) void this.enqueue(() => live.onPosition(event.amount))
  }

  private async warmUp(bars: number): Promise<void> {
    const last = this.broker.lastOpenTime
    const resumed = last === last
    // A fresh run: the newest `bars` closed bars. A resumed one: the `bars` up to its last bar, then the gap.
    // A fresh run reads up to the start of the bar open now (warmupBars: runners started within one bar share
    // the read). Closed bars after the window are backfilled before acting.
    const end = resumed ? last + this.interval : Math.floor((await this.deps.exchangeNow()) / this.interval) * this.interval
    const { start, closed } = await warmupBars(this.deps.history, this.run.symbol, this.run.timeframe, this.interval, bars, end)
    const history = (!resumed && closed.length > 0 ? closed.slice(0, -1) : closed).slice(-bars) // the newest row may still be open
    const from = history[0]?.openTime ?? end
    const funding = await warmupFunding(this.funding, start, end, from)
    await this.feed(history, funding)
    this.broker.warm(history, funding)
    if (!resumed) {
      this.extra = { warmupFrom: from, firstActive: (history[history.length - 1]?.openTime ?? from - this.interval) + this.interval }
    }
    if (this.live) {
      await this.live.prepare()
      await this.live.reconcile()
    }
    if (resumed) await this.backfill(Number.POSITIVE_INFINITY)
  }

  /** Acts on the closed bars after the last one seen and before `beforeOpen`, fetched over REST. */
  private async backfill(beforeOpen: number): Promise<void> {
    const last = this.broker.lastOpenTime
    const from = last === last ? last + this.interval : this.extra.firstActive
    if (from === undefined) return
    for (let cursor = from; cursor < beforeOpen; ) {
      // A page no larger than the gap: Binance weighs klines by limit (1 below 100, 10 above 1,000), and a gap is mostly one bar.
      const limit = Math.min(1500, Math.ceil((beforeOpen - cursor) / this.interval))
      const page = await this.deps.history.klines(this.run.symbol, this.run.timeframe, cursor, Math.min(beforeOpen, cursor + 1500 * this.interval) - 1, limit)
      // Without an upper bound the newest row may still be open: only rows the stream confirmed or older than it.
      const rows = beforeOpen === Number.POSITIVE_INFINITY ? page.slice(0, -1) : page
      for (const row of rows) if (row.openTime >= cursor) await this.act(row)
      if (page.length < limit) break
      cursor = page[page.length - 1]!.openTime + this.interval
    }
  }

  private async onBar(bar: ClosedBar, receivedAt: number): Promise<void> {
    const last = this.broker.lastOpenTime
    const expected = last === last ? last + this.interval : this.extra.firstActive
    if (expected === undefined || bar.openTime < expected) return
    if (bar.openTime > expected) await this.backfill(bar.openTime)
    if (bar.openTime > (this.broker.lastOpenTime === this.broker.lastOpenTime ? this.broker.lastOpenTime : -Infinity)) {
      this.arrival = this.deps.observe ? { openTime: bar.openTime, receivedAt } : undefined
      try {
        await this.act(bar)
      } finally {
        this.arrival = undefined
      }
    }
  }

  private async act(bar: ClosedBar): Promise<void> {
    if (this.stopped) return
    // Read first: a read that fails leaves the bar unacted for the next backfill, with the module unfed and the bar's
    // funding not yet taken (RunFunding reads each hour once).
    const minutes = this.broker instanceof PaperBroker && this.broker.minutesWanted ? await this.minutes!.of(bar.openTime) : undefined
    this.minutes?.forget(bar.openTime + this.interval)
    const funding = await this.funding.forBar(bar.openTime)
    await this.feed([bar], funding)
    if (this.live && this.broker instanceof ExchangeBroker) return this.actLive(this.live, this.broker, bar, funding)
    await this.commit((this.broker as PaperBroker).onClosedBar(bar, funding, minutes), undefined)
  }

  /** A live run's bar: settle what is pending, step the template, and send its new target as one order. */
  private async actLive(live: LiveOrders<BrokerOutcome>, broker: ExchangeBroker, bar: ClosedBar, funding: readonly FundingEvent[]): Promise<void> {
    const closeTime = bar.openTime + this.interval
    const ready = await live.ready(closeTime)
    const outcome = broker.onClosedBar(bar, funding)
    outcome.newTarget = live.aim(outcome.newTarget, ready, closeTime)
    const id = await this.commit(outcome, undefined)
    if (id) {
      await live.beforeOrder(broker.desiredQty(outcome.newTarget, bar.close, closeTime))
      await live.book(id, await broker.send(id, outcome.newTarget, bar.close, closeTime))
    }
    // A level a module moved at this close is moved on the exchange (a booked fill has already synced).
    else if (id === null) await live.protect()
  }

  /**
   * Writes one outcome (fills, trades, stats, events, the next intent) and the runner's state in one
   * transaction (the pool's group commit, shared with other runs), if this process still owns the run; returns the new intent's client order id (or null),
   * or undefined when the run was paused or taken over (the runner then stops). `pendingOrder` overrides
   * which order the outcome's fill settles (a live run books the fill of the order it just sent).
   */
  private async commit(outcome: BrokerOutcome, settles: string | null | undefined): Promise<string | null | undefined> {
    const { run, deps } = this
    const now = new Date(deps.now())
    const pendingBefore = settles === undefined ? this.pendingOrder : settles
    const totals = this.broker.totals(this.broker.lastClose)
    const lastBar = this.broker.lastOpenTime
    const closeTime = lastBar + this.interval
    const sizedQty = outcome.newTarget === outcome.newTarget && lastBar === lastBar ? this.broker.desiredQty(outcome.newTarget, this.broker.lastClose, closeTime) : undefined
    const rows = outcomeRows({ run, now, closeTime, sizedQty, pendingOrder: pendingBefore, totals, rules: this.rules }, outcome, this.counters)
    const created = rows.next
    const pendingOrder = outcome.newTarget === outcome.newTarget ? created : outcome.filledIntent ? null : pendingBefore
    const state: RunnerState = { broker: this.broker.snapshot(), pendingOrder, ...this.extra, ...this.live?.state() }
    const lastBarAt = lastBar === lastBar ? new Date(lastBar) : null
    const ok = await deps.commits.commit({ strategyId: run.strategy_id, run: run.run, rows, state: state as unknown as Record<string, unknown>, lastBarAt })
    if (!ok) {
      // Paused or taken over: the saved state is the truth; this runner stops without acting again.
      this.stop()
      return undefined
    }
    this.counters = rows.counters
    this.pendingOrder = pendingOrder
    this.decisions.committed(lastBar)
    if (this.arrival) {
      const { openTime, receivedAt } = this.arrival
      this.arrival = undefined
      deps.observe?.({ strategyId: run.strategy_id, symbol: run.symbol, openTime, receivedAt, committedAt: performance.now(), order: created !== null })
    }
    return created
  }
}
