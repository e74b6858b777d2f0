/**
 * How to use (for the positions answer, the CLI, the dashboard and the proofs):
 * - Table `protective_orders` (migration 0022): one row per protective order a live run meant to place,
 *   committed before it is sent; `client_algo_id` pa-<strategy hex>-<s|t|r><seq> (client-algo-ids.ts), `kind`
 *   stop_loss | take_profit | trailing_stop, `type` STOP_MARKET | TAKE_PROFIT_MARKET | TRAILING_STOP_MARKET (or
 *   MARKET: the alarm's close of the position), the fields sent, `status` intent | open | unknown | canceled |
 *   triggered | finished | expired | rejected, `algo_id`, `last_error`.
 * - `activeProtective(db, strategyId, symbol?)` (queries.ts) returns the run's current protective orders:
 *   the rows that rest on the exchange or may (intent, open, unknown), oldest first. A row is the run's
 *   belief; the exchange's own view is GET /fapi/v1/openAlgoOrders (client.algo.open(symbol)), which a
 *   reconciliation compares with the rows at every start, takeover and stream reconnect.
 * - A run (StrategyRunner, MultiSymbolRunner) owns one ProtectiveOrders per symbol, through
 *   SymbolProtection (symbol-protection.ts), which LiveOrders calls after every booked fill and every bar.
 */
import type { Db } from '../../db/connect.js'
import { retryingTransaction } from '../../db/retry.js'
import type { ProtectiveStatus } from '../../db/schema.js'
import { type DecimalRules, quantity } from '../../http/decimals.js'
import type { ExchangeAnswer } from '../../trading/binance/answer.js'
import type { BinanceAlgoOrder } from '../../trading/binance/algo-orders.js'
import type { BinanceTradingClient } from '../../trading/binance/trading-client.js'
import { NOT_FOUND_GIVE_UP_MS } from '../exchange/live-orders.js'
import { KEY_REFUSED, RunFailure } from '../exchange/run-failure.js'
import type { AlgoUpdate } from '../exchange/user-data-streams.js'
import { lockOwnedRuns } from '../queries.js'
import { clientAlgoId, clientAlgoIdPrefix, type ProtectiveKind, protectiveKindOf } from './client-algo-ids.js'
import { type DesiredOrder, sameOrder } from './desired-orders.js'
import { activeProtective, insertProtective, markProtective, nextProtectiveSeq, type ProtectiveRow, protectiveRow } from './queries.js'
import { metrics } from '../../ops/registry.js'

export interface ProtectiveOrdersDeps {
  db: Db
  /** The runner pool's owner: an intent is committed only while this owner holds the run's lease. */
  owner: string
  strategyId: string
  run: number
  symbol: string
  rules: DecimalRules
  /** The run's clock (ms): how long an order not found has been missing. */
  now: () => number
}

/** Something a sync could not do that the run must act on: a level the exchange refused (-2021: already crossed). */
export interface ProtectionProblem {
  kind: ProtectiveKind
  message: string
  /** The level is already crossed (-2021), or the exchange rejected it at trigger: the position is closed at market. */
  close: boolean
}

/** What a sync came to: `settled` false while an answer is unknown (tried again at the next sync); `fenced`: the run is no longer this process's. */
export interface SyncResult {
  settled: boolean
  problems: ProtectionProblem[]
  fenced?: boolean
}

const KINDS: readonly ProtectiveKind[] = ['stop_loss', 'take_profit', 'trailing_stop']

/** The exchange's algo statuses as a row keeps them. */
const STATUS_OF: Record<string, ProtectiveStatus> = {
  NEW: 'open',
  // Forwarded to the matching engine, not there yet: it may still end REJECTED (a failed margin check).
  TRIGGERING: 'open',
  TRIGGERED: 'triggered',
  FINISHED: 'finished',
  CANCELED: 'canceled',
  EXPIRED: 'expired',
  REJECTED: 'rejected',
}

/**
 * One symbol's protective orders of a live run on Binance's Algo service (research/protective-orders.md §1,
 * §4.3): makes what rests match the orders the run's levels ask for (desired-orders.ts), through the same
 * commit-before-send path as the run's plain orders. Each order is an intent row committed (fenced by the
 * run's lease) before its one POST; an id is never sent twice. An unknown answer is looked up by
 * clientAlgoId (the trading client first, then here at every later sync and reconciliation, GET algoOrder
 * then openAlgoOrders); "not found" is tolerated for NOT_FOUND_GIVE_UP_MS after the send (Binance may not
 * show an accepted algo order for a while, freqtrade#12681) as far as the row goes, but the kind is not left
 * bare meanwhile: an unknown order found nowhere is replaced under a new id at once. For a close-all kind
 * the exchange itself refuses a second (-4130) if the first did arrive, and the one resting is adopted;
 * a trailing stop (reduce-only, may coexist) whose earlier order shows up after all leaves two resting until
 * the next sync cancels the extra (docs/decisions/live.md, issue 31: an unknown placement at takeover).
 * Moving a level is cancel-then-place: a second close-all order of the same type and side is refused
 * (-4130), so the new one can only follow the old.
 */
export class ProtectiveOrders {
  readonly prefix: string
  /** The rows that rest or may (intent, open, unknown): loaded once, then kept here as this class writes them. */
  private rows: ProtectiveRow[] | undefined
  /** Unknown rows found nowhere while the exchange's -4130 said a close-all order of their kind rests (hidden from its reads): waited for, not replaced again. */
  private readonly occupied = new Set<string>()

  constructor(
    private client: BinanceTradingClient,
    private readonly deps: ProtectiveOrdersDeps,
  ) {
    this.prefix = clientAlgoIdPrefix(deps.strategyId)
  }

  useClient(client: BinanceTradingClient): void {
    this.client = client
  }

  /** The symbol's protective orders that rest or may, as this run knows them. */
  async active(): Promise<readonly ProtectiveRow[]> {
    return this.load()
  }

  /**
   * Makes the exchange hold `desired` for the symbol (empty: nothing): per kind, an open order asking the same
   * is kept, another (an extra one too) is cancelled and its replacement placed right after it. A kind whose
   * order is unknown waits while that order may rest (a read failed, or -4130 showed it resting unseen); found
   * nowhere, it is replaced under a new id at once (the unknown row stays looked up: should it appear, the
   * extra is cancelled, or for a close-all kind it is the one adopted when the exchange refuses the replacement).
   */
  async sync(desired: readonly DesiredOrder[]): Promise<SyncResult> {
    const result: SyncResult = { settled: true, problems: [] }
    const rows = await this.load()
    if (rows.length === 0 && desired.length === 0) return result
    const missing = new Set<ProtectiveRow>()
    for (const row of rows.filter((r) => r.status !== 'open')) if ((await this.lookUp(row)) === 'missing') missing.add(row)
    for (const kind of KINDS) {
      const want = desired.find((d) => d.kind === kind)
      const held = this.rows!.filter((r) => r.kind === kind && r.type !== 'MARKET')
      const kept = want && held.find((r) => r.status === 'open' && sameOrder(r, want))
      const stale = held.filter((r) => r !== kept)
      const pending = stale.filter((r) => r.status !== 'open')
      const waiting = pending.some((r) => !missing.has(r) || this.occupied.has(r.client_algo_id))
      const outcome = waiting ? 'unknown' : await this.syncKind(want, kept, stale, pending)
      if (outcome === 'fenced') return { ...result, settled: false, fenced: true }
      if (typeof outcome === 'object') result.problems.push(outcome)
      if (outcome === 'unknown' || outcome === 'occupied' || pending.some((r) => this.rows!.includes(r) && r.status !== 'open')) result.settled = false
    }
    return result
  }

  /**
   * One kind of `sync`, its unknown rows found nowhere (they do not hold it back): the open orders not `kept` are
   * cancelled, and `want` placed if none is kept ('open' when all went through).
   */
  private async syncKind(want: DesiredOrder | undefined, kept: ProtectiveRow | undefined, stale: readonly ProtectiveRow[], pending: readonly ProtectiveRow[]): Promise<Placed> {
    const resting = stale.filter((r) => r.status === 'open')
    if (!want || kept) {
      let done = true
      for (const row of resting) if (!(await this.cancel(row))) done = false
      return done ? 'open' : 'unknown'
    }
    let placed = await this.place(want, resting)
    if (placed === 'occupied') placed = await this.adopt(want, pending)
    if (placed === 'open' && want.closePosition) await this.settleBehind(want, pending)
    return placed
  }

  /**
   * A close-all order of `want`'s type and side rests now (accepted, or adopted): the exchange refuses a second
   * (-4130), so the kind's unknown rows of that type and side do not rest; they are settled as never placed.
   * Should one still arrive (a request in flight for that long), the next placement's -4130 adopts it, or a
   * reconciliation cancels it as a stray.
   */
  private async settleBehind(want: DesiredOrder, pending: readonly ProtectiveRow[]): Promise<void> {
    const behind = pending.filter((r) => (r.status === 'unknown' || r.status === 'intent') && r.type === want.type && r.side === want.side)
    for (const row of behind) await this.mark(row, 'canceled', { lastError: `not resting: a close-all ${want.type} ${want.side} rests beside it, which the exchange refuses while one rests (-4130)` })
  }

  /**
   * The reconciliation's part (start, takeover, reconnect): the symbol's open algo orders against the rows.
   * One not ours is refused as a foreign plain order is (FOREIGN_ORDER: it could change the position at any
   * moment); one of ours no row expects (an intent given up that was placed after all, an earlier run's) is
   * cancelled; a row the exchange does not list open is looked up (triggered, cancelled behind our back,
   * expired…). False while a read or a cancel is unknown.
   */
  async check(): Promise<boolean> {
    const open = await this.client.algo.open(this.deps.symbol)
    if (open.kind !== 'ok') {
      if (open.kind === 'rejected' && KEY_REFUSED.has(open.code)) throw keyRefused(open)
      return false
    }
    this.rows = undefined
    const rows = await this.load()
    let agreed = true
    for (const order of open.value) {
      if (!order.clientAlgoId.startsWith(this.prefix)) {
        throw new RunFailure(
          'FOREIGN_ORDER',
          `an open ${order.orderType} ${order.side} algo order ${order.clientAlgoId} on ${order.symbol} is not this strategy's; a run must be the only trader of its symbol on the account: cancel it, then deploy again`,
        )
      }
      const row = rows.find((r) => r.client_algo_id === order.clientAlgoId)
      if (row) {
        if (row.status !== 'open') await this.mark(row, 'open', { algoId: order.algoId })
      } else if (!(await this.cancelId(order.clientAlgoId))) {
        agreed = false
      }
    }
    const listed = new Set(open.value.map((o) => o.clientAlgoId))
    for (const row of [...this.rows!]) if (!listed.has(row.client_algo_id) && row.type !== 'MARKET') await this.lookUp(row)
    return agreed
  }

  /** An ALGO_UPDATE of one of this symbol's rows: its status as the exchange reports it. Returns the row as it was, or undefined when it is none of ours. */
  async onUpdate(update: AlgoUpdate): Promise<ProtectiveRow | undefined> {
    const rows = await this.load()
    const row = rows.find((r) => r.client_algo_id === update.clientAlgoId) ?? (await protectiveRow(this.deps.db, update.clientAlgoId))
    if (!row || row.strategy_id !== this.deps.strategyId || row.symbol !== this.deps.symbol) return undefined
    const before = { ...row }
    const status = STATUS_OF[update.status]
    if (status !== undefined && status !== row.status) await this.mark(row, status, { algoId: update.algoId, lastError: update.rejectReason || undefined })
    return before
  }

  /**
   * Closes the position at market under a protective id of `kind` (a reduce-only MARKET order for the signed
   * `exchangeQty`): the alarm's way out when a level could not rest. Its fill is booked as the exchange-side
   * close of that kind (LiveOrders), from the stream or the fills check, once.
   */
  async closeAtMarket(kind: ProtectiveKind, exchangeQty: number): Promise<'sent' | 'unknown' | 'refused' | 'fenced'> {
    if (exchangeQty === 0) return 'sent'
    const side = exchangeQty > 0 ? 'SELL' : 'BUY'
    const qty = quantity(Math.abs(exchangeQty), this.deps.rules)
    const id = await this.commitIntent({ kind, type: 'MARKET', side, triggerPrice: null, quantity: qty, closePosition: false, workingType: 'CONTRACT_PRICE', activatePrice: null, callbackRate: null })
    if (id === undefined) return 'fenced'
    const row = this.rows!.find((r) => r.client_algo_id === id)!
    const answer = await this.client.placeOrder({ symbol: this.deps.symbol, side, type: 'MARKET', quantity: qty, reduceOnly: true, clientOrderId: id })
    if (answer.kind === 'ok') {
      await this.mark(row, 'finished', {})
      return 'sent'
    }
    if (answer.kind === 'unknown') {
      await this.mark(row, 'unknown', { lastError: answer.reason })
      return 'unknown'
    }
    if (answer.kind === 'rejected' && KEY_REFUSED.has(answer.code)) throw keyRefused(answer)
    await this.mark(row, answer.kind === 'rejected' ? 'rejected' : 'canceled', { lastError: answer.kind === 'rejected' ? `${answer.code} ${answer.msg}` : answer.reason })
    return 'refused'
  }

  /** Cancels every protective order of the symbol this run holds (a pause with close_positions, before the close). False while one is unknown. */
  async cancelAll(): Promise<boolean> {
    let done = true
    for (const row of [...(await this.load())]) if (row.type !== 'MARKET' && !(await this.cancel(row))) done = false
    return done
  }

  private async load(): Promise<ProtectiveRow[]> {
    this.rows ??= await activeProtective(this.deps.db, this.deps.strategyId, this.deps.symbol)
    return this.rows
  }

  /** Commits the intent row (with the run's lease held) and returns its clientAlgoId; undefined when the run is no longer this owner's. */
  private async commitIntent(want: Omit<DesiredOrder, 'type'> & { type: ProtectiveRow['type'] }): Promise<string | undefined> {
    const { db, owner, strategyId, run, symbol } = this.deps
    const now = new Date(this.deps.now())
    const row = await retryingTransaction(db, async (trx) => {
      const held = await lockOwnedRuns(trx, owner, [{ strategyId, run }])
      if (held.size === 0) return undefined
      const seq = await nextProtectiveSeq(trx, strategyId)
      const inserted: ProtectiveRow = {
        client_algo_id: clientAlgoId(strategyId, want.kind, seq),
        strategy_id: strategyId,
        run,
        seq,
        symbol,
        kind: want.kind,
        type: want.type,
        side: want.side,
        trigger_price: want.triggerPrice,
        quantity: want.quantity,
        close_position: want.closePosition,
        working_type: want.workingType,
        activate_price: want.activatePrice,
        callback_rate: want.callbackRate,
        status: 'intent',
        algo_id: null,
        last_error: null,
        sent_at: now,
        created_at: now,
        updated_at: now,
      }
      await insertProtective(trx, inserted)
      return inserted
    })
    if (!row) return undefined
    this.rows!.push(row)
    return row.client_algo_id
  }

  /**
   * Places one desired order under a fresh intent, after cancelling the orders it `replaces` (cancel, then place: a
   * second close-all order of a type and side is refused, -4130). The intent is committed before the cancels, so the
   * unprotected gap is two exchange calls, not a commit besides. A cancel whose answer is unknown leaves the intent
   * unsent (canceled). Answers 'open', 'unknown', 'fenced', 'occupied' (-4130: a close-all order of this type and
   * side rests already), or the problem a refusal is.
   */
  private async place(want: DesiredOrder, replaces: readonly ProtectiveRow[] = []): Promise<Placed> {
    const id = await this.commitIntent(want)
    if (id === undefined) return 'fenced'
    const row = this.rows!.find((r) => r.client_algo_id === id)!
    for (const old of replaces) {
      if (!(await this.cancel(old))) {
        await this.mark(row, 'canceled', { lastError: `not sent: the cancel of ${old.client_algo_id}, which it replaces, is unknown` })
        return 'unknown'
      }
    }
    const answer = await this.client.algo.place({
      symbol: this.deps.symbol,
      side: want.side,
      type: want.type,
      triggerPrice: want.triggerPrice ?? undefined,
      quantity: want.quantity ?? undefined,
      closePosition: want.closePosition,
      reduceOnly: !want.closePosition,
      workingType: want.workingType,
      priceProtect: want.type !== 'TRAILING_STOP_MARKET',
      activatePrice: want.activatePrice ?? undefined,
      callbackRate: want.callbackRate ?? undefined,
      clientAlgoId: id,
    })
    return this.placed(row, want, answer)
  }

  private async placed(row: ProtectiveRow, want: DesiredOrder, answer: ExchangeAnswer<BinanceAlgoOrder>): Promise<Placed> {
    if (answer.kind === 'ok') {
      const status = STATUS_OF[answer.value.algoStatus] ?? 'open'
      await this.mark(row, status, { algoId: answer.value.algoId })
      return 'open'
    }
    if (answer.kind === 'unknown') {
      await this.mark(row, 'unknown', { lastError: answer.reason })
      return 'unknown'
    }
    if (answer.kind === 'unavailable') {
      // Failed before it reached the matching engine: nothing rests; the next sync places it under a new id.
      await this.mark(row, 'canceled', { lastError: answer.reason })
      return 'unknown'
    }
    if (KEY_REFUSED.has(answer.code)) throw keyRefused(answer)
    await this.mark(row, 'rejected', { lastError: `${answer.code} ${answer.msg}` })
    if (answer.code === CLOSE_ALL_RESTING) return 'occupied'
    // A trailing stop whose activation price is already passed has started trailing: placed again without it.
    if (answer.code === -2021 && want.type === 'TRAILING_STOP_MARKET' && want.activatePrice !== null) return this.place({ ...want, activatePrice: null })
    const what = `${want.type} ${want.side} ${want.triggerPrice ?? `callback ${want.callbackRate} %`} on ${this.deps.symbol}`
    if (answer.code === -2021) return { kind: want.kind, close: true, message: `the ${what} would trigger at once (the price is already past it): the position is closed at market` }
    return { kind: want.kind, close: false, message: `the exchange refused the protective ${what} (${answer.code} ${answer.msg}); it is placed again at the next bar` }
  }

  /**
   * The exchange refused `want` with -4130: a close-all order of its type and side rests. Found in openAlgoOrders
   * (ours, of this kind), it is adopted: its row (an unknown one that did arrive, or one given up) is open again,
   * and moved to `want` if it asks otherwise (cancel, then place). Not listed (the exchange does not show it yet),
   * the kind's unknown rows are taken as resting and waited for ('occupied'). One not ours is the reconciliation's
   * (FOREIGN_ORDER).
   */
  private async adopt(want: DesiredOrder, pending: readonly ProtectiveRow[]): Promise<Placed> {
    const open = await this.client.algo.open(this.deps.symbol)
    if (open.kind === 'rejected' && KEY_REFUSED.has(open.code)) throw keyRefused(open)
    const listed = open.kind === 'ok' ? open.value.find((o) => protectiveKindOf(this.prefix, o.clientAlgoId) === want.kind && o.orderType === want.type && o.side === want.side) : undefined
    if (!listed) {
      for (const row of pending) this.occupied.add(row.client_algo_id)
      return 'occupied'
    }
    const row = this.rows!.find((r) => r.client_algo_id === listed.clientAlgoId) ?? (await protectiveRow(this.deps.db, listed.clientAlgoId))
    if (!row || row.strategy_id !== this.deps.strategyId || row.symbol !== this.deps.symbol) {
      // Ours, but no run of this strategy's here holds it (a stray): cancelled, and the next sync places the order.
      await this.cancelId(listed.clientAlgoId)
      return 'unknown'
    }
    if (!this.rows!.includes(row)) this.rows = [...this.rows!, row].sort((a, b) => a.seq - b.seq)
    await this.mark(row, 'open', { algoId: listed.algoId })
    if (sameOrder(row, want)) return 'open'
    const moved = await this.place(want, [row])
    return moved === 'occupied' ? 'unknown' : moved
  }

  /** Cancels a row's order: true when it no longer rests (cancelled, or found in a final status); false while unknown. */
  private async cancel(row: ProtectiveRow): Promise<boolean> {
    const answer = await this.client.algo.cancel({ clientAlgoId: row.client_algo_id })
    if (answer.kind === 'ok') {
      await this.mark(row, 'canceled', {})
      return true
    }
    if (answer.kind === 'rejected' && KEY_REFUSED.has(answer.code)) throw keyRefused(answer)
    // -2011: no longer waiting (triggered, expired…) or not known: what it is now says.
    if (answer.kind === 'rejected') await this.lookUp(row)
    return !this.rows!.includes(row)
  }

  /** Cancels an algo order of ours no row holds; true when it is gone. */
  private async cancelId(id: string): Promise<boolean> {
    const answer = await this.client.algo.cancel({ clientAlgoId: id })
    if (answer.kind === 'rejected' && KEY_REFUSED.has(answer.code)) throw keyRefused(answer)
    return answer.kind === 'ok' || (answer.kind === 'rejected' && answer.code === -2011)
  }

  /**
   * What became of a row whose order is not known to rest: GET algoOrder by clientAlgoId, then the symbol's
   * open algo orders. Not found: a row sent NOT_FOUND_GIVE_UP_MS ago is taken as never placed (cancelled;
   * should it appear after all, a reconciliation cancels it as a stray); a younger one stays as it is.
   * Answers 'found', 'missing' (both reads answered and neither knows it) or 'unread' (a read failed).
   */
  private async lookUp(row: ProtectiveRow): Promise<'found' | 'missing' | 'unread'> {
    if (row.type === 'MARKET') return 'unread'
    const found = await this.client.algo.get({ clientAlgoId: row.client_algo_id })
    if (found.kind === 'ok') {
      const status = STATUS_OF[found.value.algoStatus]
      if (status !== undefined && status !== row.status) await this.mark(row, status, { algoId: found.value.algoId })
      return 'found'
    }
    if (found.kind === 'rejected' && KEY_REFUSED.has(found.code)) throw keyRefused(found)
    if (found.kind !== 'rejected') return 'unread'
    const open = await this.client.algo.open(this.deps.symbol)
    const listed = open.kind === 'ok' ? open.value.find((o) => o.clientAlgoId === row.client_algo_id) : undefined
    if (listed) {
      if (row.status !== 'open') await this.mark(row, 'open', { algoId: listed.algoId })
      return 'found'
    }
    const sent = (row.sent_at ?? row.created_at).getTime()
    const missingFor = this.deps.now() - sent
    if (open.kind === 'ok' && missingFor > NOT_FOUND_GIVE_UP_MS) {
      await this.mark(row, 'canceled', { lastError: `not found ${Math.round(missingFor / 60_000)} minutes after it was sent` })
    } else if (row.status === 'intent') {
      await this.mark(row, 'unknown', {})
    }
    return open.kind === 'ok' ? 'missing' : 'unread'
  }

  private async mark(row: ProtectiveRow, status: ProtectiveStatus, change: { algoId?: string | number | undefined; lastError?: string | undefined }): Promise<void> {
    await markProtective(this.deps.db, row.client_algo_id, { status, algoId: change.algoId, lastError: change.lastError, now: new Date(this.deps.now()) })
    // Every status a row takes passes here: a rejection at placement and one at trigger alike, each counted once.
    if (status === 'rejected' && row.status !== 'rejected') metrics.protectiveRejected.inc()
    row.status = status
    if (change.algoId !== undefined) row.algo_id = String(change.algoId)
    if (change.lastError !== undefined) row.last_error = change.lastError
    if (status !== 'intent' && status !== 'unknown') this.occupied.delete(row.client_algo_id)
    if (status !== 'intent' && status !== 'open' && status !== 'unknown') this.rows = this.rows?.filter((r) => r !== row)
  }
}

/** What one placement came to: resting, unknown, fenced, 'occupied' (-4130), or the problem a refusal is. */
type Placed = 'open' | 'unknown' | 'fenced' | 'occupied' | ProtectionProblem

/** -4130: an open close-all (GTE) stop or take profit of this type and side exists already. */
const CLOSE_ALL_RESTING = -4130

function keyRefused(answer: { code: number; msg: string }): RunFailure {
  return new RunFailure('KEY_REVOKED', `the exchange refused the key (${answer.code} ${answer.msg}); register a working key and deploy again`)
}
