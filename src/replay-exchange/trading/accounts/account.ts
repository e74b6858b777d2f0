import type { AlgoOrder } from '../algo/algo-order.js'
import { aliasOf } from './accounts-file.js'

/**
 * One futures account of the replay exchange and everything it holds, in memory (and in the
 * `--state` file). Amounts are numbers rounded to 8 decimals where they change (wallet, fees,
 * PnL); quantities and prices keep the symbol's grid. Times are replay time (ms), as every
 * timestamp the exchange reports.
 */

export type MarginType = 'cross' | 'isolated'
export type Side = 'BUY' | 'SELL'
export type OrderStatus = 'NEW' | 'PARTIALLY_FILLED' | 'FILLED' | 'CANCELED' | 'EXPIRED'
export type TimeInForce = 'GTC' | 'IOC' | 'FOK' | 'GTX'

export interface Position {
  /** Signed: positive long, negative short (one-way mode, positionSide BOTH). */
  amount: number
  entryPrice: number
  /** Isolated margin in the position's wallet (0 in cross). */
  isolatedWallet: number
  /** Realized PnL accumulated since the position opened (ACCOUNT_UPDATE `cr`). */
  accumulatedRealized: number
  updateTime: number
}

export interface SymbolConfig {
  leverage: number
  marginType: MarginType
}

export interface Order {
  orderId: number
  clientOrderId: string
  symbol: string
  side: Side
  type: 'MARKET' | 'LIMIT'
  timeInForce: TimeInForce
  origQty: number
  /** 0 for MARKET. */
  price: number
  reduceOnly: boolean
  status: OrderStatus
  executedQty: number
  cumQuote: number
  time: number
  updateTime: number
  /** Binance's expire reason (`er`) when EXPIRED: 2 IOC remainder, 4 reduce-only knocked out. */
  expireReason: number
  /** A triggered algo order's child: the algo order's type (`origType`, `ot`), trigger and settings, and its algoId. */
  origType?: string
  stopPrice?: number
  workingType?: 'MARK_PRICE' | 'CONTRACT_PRICE'
  closePosition?: boolean
  priceProtect?: boolean
  algoId?: number
}

export interface Trade {
  id: number
  orderId: number
  symbol: string
  side: Side
  price: number
  qty: number
  quoteQty: number
  commission: number
  realizedPnl: number
  maker: boolean
  time: number
}

export type IncomeType = 'REALIZED_PNL' | 'COMMISSION' | 'FUNDING_FEE' | 'INSURANCE_CLEAR' | 'TRANSFER'

export interface Income {
  tranId: number
  symbol: string
  incomeType: IncomeType
  income: number
  asset: string
  info: string
  time: number
  tradeId: string
}

export interface Account {
  apiKey: string
  secretKey: string
  alias: string
  /** Wallet balance per asset; USDT's includes the isolated wallets (Binance's walletBalance). */
  balances: Map<string, number>
  positions: Map<string, Position>
  config: Map<string, SymbolConfig>
  /** Every order by id (open and closed); `open` indexes the open ones. */
  orders: Map<number, Order>
  open: Map<number, Order>
  /** Every algo (conditional) order by algoId; `openAlgo` indexes those not ended (NEW, TRIGGERING, TRIGGERED). */
  algoOrders: Map<number, AlgoOrder>
  openAlgo: Map<number, AlgoOrder>
  trades: Trade[]
  income: Income[]
  /** Replay time up to which resting orders, funding and liquidation have been settled. */
  settledUntil: number
  updateTime: number
}

/** Binance's defaults for a new account's symbol: 20x, cross margin. */
export const DEFAULT_CONFIG: SymbolConfig = { leverage: 20, marginType: 'cross' }

export function newAccount(apiKey: string, secretKey: string, balances: Map<string, number>, now: number): Account {
  return {
    apiKey,
    secretKey,
    alias: aliasOf(apiKey),
    balances: new Map(balances),
    positions: new Map(),
    config: new Map(),
    orders: new Map(),
    open: new Map(),
    algoOrders: new Map(),
    openAlgo: new Map(),
    trades: [],
    income: [],
    settledUntil: now,
    updateTime: now,
  }
}

export function configOf(account: Account, symbol: string): SymbolConfig {
  return account.config.get(symbol) ?? DEFAULT_CONFIG
}

export function positionOf(account: Account, symbol: string): Position {
  return account.positions.get(symbol) ?? { amount: 0, entryPrice: 0, isolatedWallet: 0, accumulatedRealized: 0, updateTime: 0 }
}

/** Money to 8 decimals, as Binance keeps wallet amounts. */
export function round8(value: number): number {
  return Math.round(value * 1e8) / 1e8
}
