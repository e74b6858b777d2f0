import type { Db } from '../../db/connect.js'
import type { SymbolRules } from '../../engine/types.js'
import type { LedgerState } from '../../engine/ledger.js'
import { ownStrategy } from '../deploy.js'
import { latestRun, type RunRow } from '../queries.js'
import type { StrategyPosition } from '../schemas.js'
import { money, price, quantity } from '../../http/decimals.js'

/** The saved paper ledger of a run (PaperBroker.snapshot; a live run saves the ledger its exchange fills moved). */
interface SavedBroker {
  ledger?: LedgerState
  lastClose?: number | null
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
  for (const [s, symbol] of runSymbols(run).entries()) {
    const qty = ledger.arrays.qty?.[s] ?? 0
    if (!qty) continue
    positions.push(presentPosition(run, symbol, s, ledger, broker.lastClose ?? null, await rules(symbol)))
  }
  return positions
}

/** The symbols of a run, in its ledger's order. */
function runSymbols(run: RunRow): string[] {
  return [run.symbol]
}

function presentPosition(run: RunRow, symbol: string, s: number, ledger: LedgerState, lastClose: number | null, rules: SymbolRules): StrategyPosition {
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
