import type { ExitGuard } from '../../engine/exit-guard.js'
import type { DecimalRules } from '../../http/decimals.js'
import type { BinanceTradingClient } from '../../trading/binance/trading-client.js'
import type { LiveProtection, ProtectionAfter, UpdatedOrder } from '../exchange/live-orders.js'
import type { AlgoUpdate } from '../exchange/user-data-streams.js'
import { type ProtectiveKind, protectiveKindOf } from './client-algo-ids.js'
import { desiredOrders } from './desired-orders.js'
import { raiseProtectionAlarm } from './alarm.js'
import { ProtectiveOrders, type ProtectiveOrdersDeps } from './protective-orders.js'

/** One symbol of a run's ledger as its protection reads it: the position, and the guard keeping its levels (index `s`). */
export interface ProtectedLedger {
  readonly qty: number
  readonly guard: ExitGuard | undefined
  readonly index: number
}

/**
 * One symbol's protection as LiveOrders drives it: the orders the ledger's levels ask for (desired-orders.ts)
 * made to rest (ProtectiveOrders), and the alarm when one cannot: last_error, strategy.error, a stream
 * message (`alarm`), and for a level already crossed a close at market under the level's kind.
 */
export class SymbolProtection implements LiveProtection {
  constructor(
    readonly orders: ProtectiveOrders,
    private readonly ledger: ProtectedLedger,
    private readonly rules: DecimalRules,
    readonly alarm: (message: string) => Promise<void>,
  ) {}

  kindOf(clientOrderId: string): ProtectiveKind | undefined {
    return protectiveKindOf(this.orders.prefix, clientOrderId)
  }

  owns(clientAlgoId: string): boolean {
    return clientAlgoId.startsWith(this.orders.prefix)
  }

  useClient(client: BinanceTradingClient): void {
    this.orders.useClient(client)
  }

  check(): Promise<boolean> {
    return this.orders.check()
  }

  /**
   * The levels a module stated at the last close apply to the position held now (the run's order of that close
   * is booked), then the exchange is made to hold what they ask for. A level refused as already crossed closes
   * the position at market ('closed': the caller books the fill).
   */
  async protect(exchangeQty: () => Promise<number>): Promise<ProtectionAfter> {
    const { guard, index } = this.ledger
    guard?.applyPending(index, Number.NaN)
    const result = await this.orders.sync(desiredOrders(this.ledger.qty, guard?.levels, index, this.rules))
    if (result.fenced) return 'fenced'
    for (const problem of result.problems) {
      await this.alarm(problem.message)
      if (problem.close) {
        const sent = await this.orders.closeAtMarket(problem.kind, await exchangeQty())
        return sent === 'fenced' ? 'fenced' : 'closed'
      }
    }
    return result.settled ? 'settled' : 'unsettled'
  }

  async onUpdate(update: AlgoUpdate): Promise<UpdatedOrder | undefined> {
    const row = await this.orders.onUpdate(update)
    return row && { kind: row.kind, side: row.side, wasActive: true }
  }

  async closeAtMarket(kind: ProtectiveKind, exchangeQty: number): Promise<void> {
    await this.orders.closeAtMarket(kind, exchangeQty)
  }

  cancelAll(): Promise<boolean> {
    return this.orders.cancelAll()
  }
}

/** What a runner gives to protect one symbol of its live run. */
export interface SymbolProtectionSetup {
  db: ProtectiveOrdersDeps['db']
  owner: string
  run: { strategy_id: string; run: number; user_id: number }
  symbol: string
  rules: DecimalRules
  now: () => number
  client: BinanceTradingClient
  ledger: ProtectedLedger
}

/** One symbol's protection of a live run (its rows, its orders, its alarms). */
export function symbolProtection(setup: SymbolProtectionSetup): SymbolProtection {
  const { db, owner, run, symbol, rules, now, client, ledger } = setup
  const orders = new ProtectiveOrders(client, { db, owner, strategyId: run.strategy_id, run: run.run, symbol, rules, now })
  return new SymbolProtection(orders, ledger, rules, (message) => raiseProtectionAlarm(db, run, message, new Date(now())))
}
