import type { Db } from '../../db/connect.js'
import type { ExitLevels } from '../../engine/exit-levels.js'
import type { ExitRules, SymbolRules } from '../../engine/types.js'
import { Ledger, type LedgerState } from '../../engine/ledger.js'
import { exitRulesOf } from '../../strategies/exits.js'
import { ownStrategy } from '../deploy.js'
import { latestRun, type RunRow } from '../queries.js'
import type { StrategyPosition } from '../schemas.js'
import { money, price, quantity } from '../../http/decimals.js'
import type { BinanceTradingClient } from '../../trading/binance/trading-client.js'
import { RunFailure } from '../exchange/run-failure.js'
import { type ExchangeProtection, readProtection } from './protective-orders.js'

/** The saved paper ledger of a run (PaperBroker.snapshot; a live run saves the ledger its exchange fills moved). */
interface SavedBroker {
  ledger?: LedgerState
  /** One number for a one-symbol run; one per symbol for a many-symbol run (MultiPaperBroker.snapshot). */
  lastClose?: number | null | (number | null)[]
}

/**
 * GET /v1/strategies/{id}/positions (our addition): what the current run holds, or the last run held when
 * it ended, from the run's ledger as its runner last saved it; marked at the last close the run saw. Empty
 * before the first deploy and when flat. A live position also shows the protective orders resting on the
 * exchange for it, read from the exchange now (they, not the ledger, close it while Perpetua is down).
 */
export async function listPositions(
  db: Db,
  userId: number,
  id: string,
  rules: (symbol: string) => Promise<SymbolRules>,
  exchangeOf: (run: RunRow) => Promise<BinanceTradingClient>,
): Promise<StrategyPosition[]> {
  const strategy = await ownStrategy(db, userId, id, false)
  const run = await latestRun(db, strategy.id)
  const broker = (run?.state as { broker?: SavedBroker } | null | undefined)?.broker
  const ledger = broker?.ledger
  if (!run || !ledger) return []
  const symbols = runSymbols(run)
  const symbolRules = await Promise.all(symbols.map((symbol) => rules(symbol)))
  const exitRules = run.exits ? exitRulesOf(run.exits) : undefined
  const levels = savedLevels(symbols, symbolRules, ledger, exitRules)
  const held = [...symbols.entries()].filter(([s]) => (ledger.arrays.qty?.[s] ?? 0) !== 0)
  const onExchange = run.dry_run || held.length === 0 ? undefined : await exchangeProtection(run, held, symbolRules, exchangeOf)
  return held.map(([s, symbol]) => {
    const lastClose = Array.isArray(broker.lastClose) ? broker.lastClose[s] : broker.lastClose
    const resting = onExchange?.[s]
    return {
      ...presentPosition(run, symbol, s, ledger, lastClose ?? null, symbolRules[s]!),
      ...protection(levels, exitRules, s, ledger.arrays.qty![s]!, symbolRules[s]!),
      protective_orders: resting && 'orders' in resting ? resting.orders : null,
      protective_orders_error: resting && 'error' in resting ? resting.error : null,
    }
  })
}

/**
 * A live run's protective orders as the exchange holds them, for each held symbol (one weight-1 read each, in
 * parallel); a key that no longer opens is the answer for every symbol.
 */
async function exchangeProtection(
  run: RunRow,
  held: [number, string][],
  rules: readonly SymbolRules[],
  exchangeOf: (run: RunRow) => Promise<BinanceTradingClient>,
): Promise<Record<number, ExchangeProtection>> {
  let client: BinanceTradingClient
  try {
    client = await exchangeOf(run)
  } catch (error) {
    if (!(error instanceof RunFailure)) throw error
    return Object.fromEntries(held.map(([s]) => [s, { error: error.message }]))
  }
  const read = await Promise.all(held.map(([s, symbol]) => readProtection(client, run.strategy_id, symbol, rules[s]!)))
  return Object.fromEntries(held.map(([s], k) => [s, read[k]!]))
}

/**
 * The protective levels a run saved with its ledger (a dry run's, with exits or a signal stating levels), read
 * through the engine's own ExitLevels: a ledger protected by the run's exit rules, then restored from the
 * snapshot, as its runner restores it. Undefined when the snapshot holds none.
 */
function savedLevels(symbols: readonly string[], rules: readonly SymbolRules[], saved: LedgerState, exitRules: ExitRules | undefined): ExitLevels | undefined {
  if (saved.arrays.exitStop === undefined) return undefined
  const ledger = new Ledger(symbols, rules, 0, 1, 0)
  const levels = ledger.protect(exitRules)
  ledger.restore(saved)
  return levels
}

/** What protects symbol s's position (signed `qty`) now, at the tick; nulls for none. */
function protection(levels: ExitLevels | undefined, exitRules: ExitRules | undefined, s: number, qty: number, rules: SymbolRules): Pick<StrategyPosition, 'stop_price' | 'take_profit_price' | 'trailing' | 'trigger'> {
  const at = (level: number | undefined) => (level !== undefined && level === level ? price(level, rules) : null)
  const side = Math.sign(qty)
  const stop = at(levels?.stopLevel(s))
  const take = at(levels?.takeLevel(s))
  const trailing =
    exitRules?.trailingStop === undefined
      ? null
      : { activation_price: at(levels?.exitActivation[s]), best_price: at(levels?.exitBest[s]), stop_price: at(levels?.trailLevel(s, side)) }
  const protectedNow = stop !== null || take !== null || trailing !== null
  return { stop_price: stop, take_profit_price: take, trailing, trigger: protectedNow ? (exitRules?.trigger ?? 'last') : null }
}

/** The symbols of a run, in its ledger's order. */
function runSymbols(run: RunRow): string[] {
  return run.symbols
}

function presentPosition(
  run: RunRow,
  symbol: string,
  s: number,
  ledger: LedgerState,
  lastClose: number | null,
  rules: SymbolRules,
): Omit<StrategyPosition, 'stop_price' | 'take_profit_price' | 'trailing' | 'trigger' | 'protective_orders' | 'protective_orders_error'> {
  const at = (key: string) => ledger.arrays[key]?.[s] ?? 0
  const qty = at('qty')
  const entry = at('entryPrice')
  const mark = lastClose !== null && lastClose === lastClose ? lastClose : null
  const liquidation = at('liq')
  const openedAt = at('tripEntryTime')
  return {
    symbol,
    side: qty > 0 ? 'buy' : 'sell',
    qty: quantity(Math.abs(qty), rules),
    // An average of fills at several prices is shown at the nearest tick, as orders and trades show it.
    entry_price: price(entry, rules),
    mark_price: mark === null ? null : price(mark, rules),
    unrealized_pnl: mark === null ? null : money(qty * (mark - entry)),
    liquidation_price: liquidation > 0 ? price(liquidation, rules) : null,
    opened_at: openedAt > 0 ? new Date(openedAt).toISOString() : null,
    mode: run.dry_run ? 'dry_run' : 'live',
  }
}
