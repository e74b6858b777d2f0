import type { MaintenanceBracket } from '../../../binance-formats/leverage-brackets.js'
import { liquidationPrice, maintenanceMargin } from '../../../binance-formats/margin.js'
import { type Account, configOf, type Order } from '../accounts/account.js'

/**
 * Margin arithmetic of a one-way account in single-asset (USDT) mode, with each symbol's own tiers
 * (the data folder's leverageBracket snapshot, else Binance's recorded BTCUSDT sample; README "Accounts").
 */
export type Brackets = (symbol: string) => readonly MaintenanceBracket[]

/** Mark price per symbol at the moment of the calculation. */
export type Marks = (symbol: string) => number

export function unrealizedPnl(amount: number, entryPrice: number, mark: number): number {
  return amount * (mark - entryPrice)
}

/** Initial margin of the position: |amount| × mark / leverage (Binance's positionInitialMargin). */
export function positionInitialMargin(account: Account, symbol: string, mark: number): number {
  const position = account.positions.get(symbol)
  if (!position || position.amount === 0) return 0
  return (Math.abs(position.amount) * mark) / configOf(account, symbol).leverage
}

/**
 * The initial margin an open order reserves: the part of it that would grow the position, at its
 * price, over the leverage (a reduce-only order, or the part of an order that only reduces the
 * position, reserves nothing).
 */
export function orderInitialMargin(account: Account, order: Order, unfilled = order.origQty - order.executedQty): number {
  if (order.reduceOnly) return 0
  const amount = account.positions.get(order.symbol)?.amount ?? 0
  const direction = order.side === 'BUY' ? 1 : -1
  const growing = Math.sign(amount) === -direction ? Math.max(0, unfilled - Math.abs(amount)) : unfilled
  return (growing * order.price) / configOf(account, order.symbol).leverage
}

export interface MarginSummary {
  wallet: number
  /** Wallet minus isolated wallets. */
  crossWallet: number
  crossUnrealized: number
  unrealized: number
  positionInitial: number
  openOrderInitial: number
  maintenance: number
  /** crossWallet + crossUnrealized − cross position margin − open-order margin, at least 0. */
  available: number
}

export function marginSummary(account: Account, marks: Marks, brackets: Brackets): MarginSummary {
  const wallet = account.balances.get('USDT') ?? 0
  let crossWallet = wallet
  let crossUnrealized = 0
  let unrealized = 0
  let crossPositionInitial = 0
  let positionInitial = 0
  let maintenance = 0
  for (const [symbol, position] of account.positions) {
    if (position.amount === 0) continue
    const mark = marks(symbol)
    const pnl = unrealizedPnl(position.amount, position.entryPrice, mark)
    const initial = positionInitialMargin(account, symbol, mark)
    unrealized += pnl
    positionInitial += initial
    maintenance += maintenanceMargin(brackets(symbol), Math.abs(position.amount) * mark)
    if (configOf(account, symbol).marginType === 'isolated') {
      crossWallet -= position.isolatedWallet
    } else {
      crossUnrealized += pnl
      crossPositionInitial += initial
    }
  }
  let openOrderInitial = 0
  for (const order of account.open.values()) openOrderInitial += orderInitialMargin(account, order)
  const available = Math.max(0, crossWallet + crossUnrealized - crossPositionInitial - openOrderInitial)
  return { wallet, crossWallet, crossUnrealized, unrealized, positionInitial, openOrderInitial, maintenance, available }
}

/** An isolated position's liquidation price by Binance's formula over the symbol's brackets; 0 for none (cross or flat). */
export function isolatedLiquidationPrice(account: Account, symbol: string, brackets: Brackets): number {
  const position = account.positions.get(symbol)
  if (!position || position.amount === 0 || configOf(account, symbol).marginType !== 'isolated') return 0
  return liquidationPrice(position.amount > 0 ? 1 : -1, Math.abs(position.amount), position.entryPrice, position.isolatedWallet, brackets(symbol))
}

/** The largest notional a leverage allows: the cap of the last tier whose initial leverage reaches it. */
export function maxNotional(brackets: readonly MaintenanceBracket[], leverage: number): number {
  let cap = 0
  for (const bracket of brackets) if ((bracket.initialLeverage ?? 0) >= leverage) cap = bracket.notionalCap
  return cap
}
