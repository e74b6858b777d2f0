import type { Db } from '../../db/connect.js'
import type { ExitLevels } from '../../engine/exit-levels.js'
import type { ExitRules, SymbolRules } from '../../engine/types.js'
import { Ledger, type LedgerState } from '../../engine/ledger.js'
import { exitRulesOf } from '../../strategies/exits.js'
import { ownStrategy } from '../deploy.js'
import { latestRun, type RunRow } from '../queries.js'
import type { StrategyPosition } from '../schemas.js'
import { money, price, quantity } from '../../http/decimals.js'

/** The saved paper ledger of a run (PaperBroker.snapshot; a live run saves the ledger its exchange fills moved). */
interface SavedBroker {
  ledger?: LedgerState
  /** One number for a one-symbol run; one per symbol for a many-symbol run (MultiPaperBroker.snapshot). */
  lastClose?: number | null | (number | null)[]
}

/**
 * GET /v1/strategies/{id}/positions (our addition): what the current run holds, or the last run held when
 * it ended, from the run's ledger as its runner last saved it; marked at the last close the run saw. Empty
 * before the first deploy and when flat.
 */
export async function listPositions(db: Db, userId: number, id: string, rules: (symbol: string) => Promise<SymbolRules>): Promise<StrategyPosition[]> {
  const strategy = await ownStrategy(db, userId, id, false)
  const run = await latestRun(db, strategy.id)
  const broker = (run?.state as { broker?: SavedBroker } | null | undefined)?.broker
  const ledger = broker?.ledger
  if (!run || !ledger) return []
  const positions: StrategyPosition[] = []
  const symbols = runSymbols(run)
  const symbolRules = await Promise.all(symbols.map((symbol) => rules(symbol)))
  const exitRules = run.exits ? exitRulesOf(run.exits) : undefined
  const levels = savedLevels(symbols, symbolRules, ledger, exitRules)
  for (const [s, symbol] of symbols.entries()) {
    const qty = ledger.arrays.qty?.[s] ?? 0
    if (!qty) continue
    const lastClose = Array.isArray(broker.lastClose) ? broker.lastClose[s] : broker.lastClose
    positions.push({ ...presentPosition(run, symbol, s, ledger, lastClose ?? null, symbolRules[s]!), ...protection(levels, exitRules, s, qty, symbolRules[s]!) })
  }
  return positions
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

function presentPosition(run: RunRow, symbol: string, s: number, ledger: LedgerState, lastClose: number | null, rules: SymbolRules): Omit<StrategyPosition, 'stop_price' | 'take_profit_price' | 'trailing' | 'trigger'> {
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
