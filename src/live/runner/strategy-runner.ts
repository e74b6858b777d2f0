import type { Db } from '../../db/connect.js'
import type { SymbolRules } from '../../engine/types.js'
import type { HistorySource } from '../../backtests/history-store.js'
import { getTemplate } from '../../templates/validate.js'
import type { SingleSymbolTemplate } from '../../templates/types.js'
import type { BrokerOutcome, ClosedBar, FundingEvent } from '../brokers/broker.js'
import { ExchangeBroker } from '../brokers/exchange-broker.js'
import { PaperBroker } from '../brokers/paper-broker.js'
import { failRun, RunFailure } from '../exchange/run-failure.js'
import { LiveOrders, type LiveState } from '../exchange/live-orders.js'
import type { BinanceTradingClient } from '../../trading/binance/trading-client.js'
import type { UserDataStreams, UserStreamEvent } from '../exchange/user-data-streams.js'
import { paperSetup } from '../deploy.js'
import { orderStatus, type RunRow, saveRunState } from '../queries.js'
import { clientOrderIdPrefix, recordOutcome, type RunState } from '../record-outcome.js'
import type { KlineStreams } from '../stream/kline-streams.js'
import { intervalMs } from '../timeframes.js'

export interface RunnerDeps {
  db: Db
  history: HistorySource
  streams: KlineStreams
  rules: (symbol: string) => Promise<SymbolRules>
  owner: string
  now: () => number
  /** The exchange's clock (GET /fapi/v1/time): the replay exchange's runs faster than ours. */
  exchangeNow: () => Promise<number>
  onError: (error: unknown, run: RunRow) => void
  /** The signed client of a live run's exchange key (absent where this process holds no master key). */
  tradingClient?: (run: RunRow) => Promise<BinanceTradingClient>
  /** The process's user data streams, one per exchange account: a live run hears its orders' and positions' changes there. */
  userStreams?: UserDataStreams
}

const HOUR = 3_600_000

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
  private live: LiveOrders | undefined
  private pendingOrder: string | null = null
  private unsubscribe: (() => void) | undefined
  private unsubscribeUser: (() => void) | undefined
  private chain: Promise<void> = Promise.resolve()
  private stopped = false
  private readonly interval: number
  private fundingFetchedThrough = 0
  private extra: { warmupFrom?: number; firstActive?: number } = {}

  constructor(
    readonly run: RunRow,
    private readonly deps: RunnerDeps,
  ) {
    this.interval = intervalMs(run.timeframe)
  }

  async start(): Promise<void> {
    const { run, deps } = this
    const template = getTemplate(run.template_id) as SingleSymbolTemplate
    const setup = paperSetup(run, template, await deps.rules(run.symbol))
    const state = run.state as unknown as RunnerState | null
    const paper = new PaperBroker(setup, state?.broker)
    this.broker = paper
    this.pendingOrder = state?.pendingOrder ?? null
    this.extra = { warmupFrom: state?.warmupFrom, firstActive: state?.firstActive }

    const warmup = template.warmupBars(setup.params as never, this.interval)
    // Subscribe first so no closed bar is lost while history loads; the chain orders everything.
    this.unsubscribe = deps.streams.subscribe(run.symbol, run.timeframe, (event) => {
      if (event.type === 'closed') this.enqueue(() => this.onBar(event.bar))
      else
        this.enqueue(async () => {
          // After a reconnect the exchange's picture comes first: trading waits until it agrees with ours.
          if (this.live && this.broker instanceof ExchangeBroker) {
            this.broker.useClient(await this.deps.tradingClient!(this.run))
            await this.live.reconcile()
          }
          await this.backfill(Number.POSITIVE_INFINITY)
        })
    })
    await this.enqueue(async () => {
      if (!run.dry_run) {
        // Inside the chain, so a refused key (RunFailure) moves the strategy to error like any later step.
        if (!deps.tradingClient) throw new Error('this process cannot trade live runs: it holds no master key to open exchange keys')
        const client = await deps.tradingClient(run)
        const broker = new ExchangeBroker(paper, client, setup)
        this.broker = broker
        this.live = new LiveOrders(broker, {
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
    })
  }

  stop(): void {
    this.stopped = true
    this.unsubscribe?.()
    this.unsubscribeUser?.()
  }

  /** Resolves once every queued step is done (tests and shutdown). */
  idle(): Promise<void> {
    return this.chain
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    this.chain = this.chain.then(async () => {
      if (this.stopped) return
      try {
        await step()
      } catch (error) {
        if (error instanceof RunFailure) {
          this.stop()
          await failRun(this.deps.db, this.run, this.deps.owner, error, new Date(this.deps.now()))
        }
        this.deps.onError(error, this.run)
      }
    })
    return this.chain
  }

  /** The user data stream, through the chain like every step: settles and checks never run beside a bar. */
  private onUserEvent(event: UserStreamEvent): void {
    const live = this.live
    if (!live) return
    if (event.type === 'connected') void this.enqueue(async () => void (await live.reconcile()))
    else if (event.type === 'order' && event.update.symbol === this.run.symbol) void this.enqueue(() => live.onOrderUpdate(event.update))
    else if (event.type === 'position' && event.symbol === this.run.symbol) void this.enqueue(() => live.onPosition(event.amount))
  }

  private async warmUp(bars: number): Promise<void> {
    const last = this.broker.lastOpenTime
    const resumed = last === last
    // A fresh run: the newest `bars` closed bars. A resumed one: the `bars` up to its last bar, then the gap.
    const end = resumed ? last + this.interval : await this.deps.exchangeNow()
    const rows = await this.deps.history.klines(this.run.symbol, this.run.timeframe, end - (bars + 2) * this.interval, end - 1, 1500)
    let closed = rows.filter((r) => r.openTime + this.interval <= end)
    if (!resumed && closed.length > 0) closed = closed.slice(0, -1) // the newest row may still be open
    const history = closed.slice(-bars)
    const from = history[0]?.openTime ?? end
    const funding = await this.fetchFunding(from, end)
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
      const page = await this.deps.history.klines(this.run.symbol, this.run.timeframe, cursor, Math.min(beforeOpen, cursor + 1500 * this.interval) - 1, 1500)
      // Without an upper bound the newest row may still be open: only rows the stream confirmed or older than it.
      const rows = beforeOpen === Number.POSITIVE_INFINITY ? page.slice(0, -1) : page
      for (const row of rows) if (row.openTime >= cursor) await this.act(row)
      if (page.length < 1500) break
      cursor = page[page.length - 1]!.openTime + this.interval
    }
  }

  private async onBar(bar: ClosedBar): Promise<void> {
    const last = this.broker.lastOpenTime
    const expected = last === last ? last + this.interval : this.extra.firstActive
    if (expected === undefined || bar.openTime < expected) return
    if (bar.openTime > expected) await this.backfill(bar.openTime)
    if (bar.openTime > (this.broker.lastOpenTime === this.broker.lastOpenTime ? this.broker.lastOpenTime : -Infinity)) await this.act(bar)
  }

  private async act(bar: ClosedBar): Promise<void> {
    if (this.stopped) return
    const funding = await this.fundingFor(bar)
    if (this.live) return this.live.act(bar, funding, this.interval)
    await this.commit(this.broker.onClosedBar(bar, funding), undefined)
  }

  /**
   * Writes one outcome (fills, trades, stats, events, the next intent) and the runner's state in one
   * transaction, if this process still owns the run; returns the new intent's client order id (or null),
   * or undefined when the run was paused or taken over (the runner then stops). `pendingOrder` overrides
   * which order the outcome's fill settles (a live run books the fill of the order it just sent).
   */
  private async commit(outcome: BrokerOutcome, settles: string | null | undefined): Promise<string | null | undefined> {
    const { run, deps } = this
    const now = new Date(deps.now())
    const pendingBefore = settles === undefined ? this.pendingOrder : settles
    let created: string | null = null
    const ok = await deps.db.transaction().execute(async (trx) => {
      const owned = await trx
        .selectFrom('strategy_runs')
        .select('run')
        .where('strategy_id', '=', run.strategy_id)
        .where('run', '=', run.run)
        .where('lease_owner', '=', deps.owner)
        .where('ended_at', 'is', null)
        .forUpdate()
        .executeTakeFirst()
      if (!owned) return false
      const totals = this.broker.totals(this.broker.lastClose)
      const next = await recordOutcome(trx, { run, now, pendingOrder: pendingBefore, totals }, outcome)
      created = next
      const pendingOrder = outcome.newTarget === outcome.newTarget ? next : outcome.filledIntent ? null : pendingBefore
      const state: RunnerState = { broker: this.broker.snapshot(), pendingOrder, ...this.extra, ...this.live?.state() }
      await saveRunState(trx, run.strategy_id, run.run, deps.owner, state as unknown as Record<string, unknown>)
      this.pendingOrder = pendingOrder
      return true
    })
    if (!ok) {
      // Paused or taken over: the saved state is the truth; this runner stops without acting again.
      this.stop()
      return undefined
    }
    return created
  }

  /** Funding events up to this bar's close, fetched when the bar holds an hour boundary (settlements are on the hour). */
  private async fundingFor(bar: ClosedBar): Promise<FundingEvent[]> {
    const end = bar.openTime + this.interval
    const crossesHour = Math.floor((end - 1) / HOUR) !== Math.floor((bar.openTime - 1) / HOUR)
    if (!crossesHour || end <= this.fundingFetchedThrough) return []
    return this.fetchFunding(Math.max(this.fundingFetchedThrough, bar.openTime - HOUR), end)
  }

  private async fetchFunding(from: number, to: number): Promise<FundingEvent[]> {
    const rows = await this.deps.history.fundingRates(this.run.symbol, from, to - 1, 1000)
    this.fundingFetchedThrough = Math.max(this.fundingFetchedThrough, to)
    return rows.map((r) => ({ time: r.fundingTime, rate: r.fundingRate, markPrice: r.markPrice ?? Number.NaN }))
  }
}
