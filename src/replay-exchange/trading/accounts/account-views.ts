import { maintenanceMargin } from '../../../binance-formats/margin.js'
import type { SymbolInfo } from '../../market-data/recorded/exchange-info.js'
import { amountText, money, priceText } from '../format.js'
import { type Brackets, isolatedLiquidationPrice, type MarginSummary, maxNotional, orderInitialMargin, positionInitialMargin, unrealizedPnl } from '../positions/margin.js'
import { type Account, configOf, positionOf } from './account.js'

/** What the views need of the market at the moment of the request. */
export interface ViewContext {
  summary: MarginSummary
  brackets: Brackets
  mark: (symbol: string) => number
  info: (symbol: string) => SymbolInfo
  /** Symbols listed in "all symbols" views (v2 account positions, v2 positionRisk). */
  symbols: () => string[]
}

/** Symbols with a position or open orders: what the v3 views list. */
function active(account: Account): string[] {
  const names = new Set<string>()
  for (const [name, p] of account.positions) if (p.amount !== 0) names.add(name)
  for (const order of account.open.values()) names.add(order.symbol)
  return [...names].sort()
}

function openOrderMargin(account: Account, symbol: string): number {
  let total = 0
  for (const order of account.open.values()) if (order.symbol === symbol) total += orderInitialMargin(account, order)
  return total
}

/** The asset rows of /fapi/v2|v3/account and the balance rows: USDT carries the margin; other assets are plain wallets. */
function assetRows(account: Account, ctx: ViewContext): Record<string, unknown>[] {
  const s = ctx.summary
  return [...account.balances.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([asset, amount]) => {
      const usdt = asset === 'USDT'
      return {
        asset,
        walletBalance: money(amount),
        unrealizedProfit: money(usdt ? s.unrealized : 0),
        marginBalance: money(usdt ? amount + s.unrealized : amount),
        maintMargin: money(usdt ? s.maintenance : 0),
        initialMargin: money(usdt ? s.positionInitial + s.openOrderInitial : 0),
        positionInitialMargin: money(usdt ? s.positionInitial : 0),
        openOrderInitialMargin: money(usdt ? s.openOrderInitial : 0),
        crossWalletBalance: money(usdt ? s.crossWallet : amount),
        crossUnPnl: money(usdt ? s.crossUnrealized : 0),
        availableBalance: money(usdt ? s.available : amount),
        maxWithdrawAmount: money(usdt ? Math.min(s.available, s.crossWallet) : amount),
        marginAvailable: true,
        updateTime: account.updateTime,
      }
    })
}

function totals(ctx: ViewContext): Record<string, string> {
  const s = ctx.summary
  return {
    totalInitialMargin: money(s.positionInitial + s.openOrderInitial),
    totalMaintMargin: money(s.maintenance),
    totalWalletBalance: money(s.wallet),
    totalUnrealizedProfit: money(s.unrealized),
    totalMarginBalance: money(s.wallet + s.unrealized),
    totalPositionInitialMargin: money(s.positionInitial),
    totalOpenOrderInitialMargin: money(s.openOrderInitial),
    totalCrossWalletBalance: money(s.crossWallet),
    totalCrossUnPnl: money(s.crossUnrealized),
    availableBalance: money(s.available),
    maxWithdrawAmount: money(Math.min(s.available, s.crossWallet)),
  }
}

function accountPosition(account: Account, name: string, ctx: ViewContext, v3: boolean): Record<string, unknown> {
  const info = ctx.info(name)
  const p = positionOf(account, name)
  const config = configOf(account, name)
  const mark = p.amount === 0 ? 0 : ctx.mark(name)
  const initial = positionInitialMargin(account, name, mark)
  const orders = openOrderMargin(account, name)
  const notional = p.amount * mark
  const common = {
    symbol: name,
    positionSide: 'BOTH',
    positionAmt: amountText(info, p.amount),
    unrealizedProfit: money(unrealizedPnl(p.amount, p.entryPrice, mark)),
    isolatedMargin: money(config.marginType === 'isolated' ? p.isolatedWallet + unrealizedPnl(p.amount, p.entryPrice, mark) : 0),
    notional: money(notional),
    isolatedWallet: money(p.isolatedWallet),
    initialMargin: money(initial + orders),
    maintMargin: money(maintenanceMargin(ctx.brackets(name), Math.abs(notional))),
    updateTime: p.updateTime,
  }
  if (v3) return common
  return {
    symbol: name,
    initialMargin: common.initialMargin,
    maintMargin: common.maintMargin,
    unrealizedProfit: common.unrealizedProfit,
    positionInitialMargin: money(initial),
    openOrderInitialMargin: money(orders),
    leverage: String(config.leverage),
    isolated: config.marginType === 'isolated',
    entryPrice: priceText(info, p.entryPrice),
    breakEvenPrice: priceText(info, p.entryPrice),
    maxNotional: String(maxNotional(ctx.brackets(name), config.leverage)),
    bidNotional: '0',
    askNotional: '0',
    positionSide: 'BOTH',
    positionAmt: common.positionAmt,
    updateTime: p.updateTime,
  }
}

/** GET /fapi/v2/account (single-asset mode: totals are USDT's; positions for every symbol). */
export function accountV2(account: Account, ctx: ViewContext): Record<string, unknown> {
  return {
    feeTier: 0,
    feeBurn: false,
    canTrade: true,
    canDeposit: true,
    canWithdraw: true,
    updateTime: 0,
    multiAssetsMargin: false,
    tradeGroupId: -1,
    ...totals(ctx),
    assets: assetRows(account, ctx),
    positions: ctx.symbols().map((name) => accountPosition(account, name, ctx, false)),
  }
}

/** GET /fapi/v3/account: no flags; only positions with exposure or open orders. */
export function accountV3(account: Account, ctx: ViewContext): Record<string, unknown> {
  return { ...totals(ctx), assets: assetRows(account, ctx), positions: active(account).map((name) => accountPosition(account, name, ctx, true)) }
}

/** GET /fapi/v2/balance and /fapi/v3/balance. */
export function balances(account: Account, ctx: ViewContext): Record<string, unknown>[] {
  return assetRows(account, ctx).map((row) => ({
    accountAlias: account.alias,
    asset: row.asset,
    balance: row.walletBalance,
    crossWalletBalance: row.crossWalletBalance,
    crossUnPnl: row.crossUnPnl,
    availableBalance: row.availableBalance,
    maxWithdrawAmount: row.maxWithdrawAmount,
    marginAvailable: true,
    updateTime: account.updateTime,
  }))
}

/** GET /fapi/v2/positionRisk (every symbol, or the one asked) and /fapi/v3/positionRisk (active ones). */
export function positionRisk(account: Account, ctx: ViewContext, v3: boolean, symbol: string | undefined): Record<string, unknown>[] {
  const names = symbol !== undefined ? [symbol] : v3 ? active(account) : ctx.symbols()
  return names
    .filter((name) => !v3 || symbol === undefined || active(account).includes(name))
    .map((name) => {
      const info = ctx.info(name)
      const p = positionOf(account, name)
      const config = configOf(account, name)
      const mark = ctx.mark(name)
      const pnl = unrealizedPnl(p.amount, p.entryPrice, mark)
      const row: Record<string, unknown> = {
        symbol: name,
        positionSide: 'BOTH',
        positionAmt: amountText(info, p.amount),
        entryPrice: priceText(info, p.entryPrice),
        breakEvenPrice: priceText(info, p.entryPrice),
        markPrice: money(mark),
        unRealizedProfit: money(pnl),
        liquidationPrice: money(isolatedLiquidationPrice(account, name, ctx.brackets)),
        isolatedMargin: money(config.marginType === 'isolated' ? p.isolatedWallet + pnl : 0),
        notional: money(p.amount * mark),
        marginAsset: 'USDT',
        isolatedWallet: money(p.isolatedWallet),
      }
      if (v3) {
        const initial = positionInitialMargin(account, name, mark)
        const orders = openOrderMargin(account, name)
        Object.assign(row, {
          initialMargin: money(initial + orders),
          maintMargin: money(maintenanceMargin(ctx.brackets(name), Math.abs(p.amount * mark))),
          positionInitialMargin: money(initial),
          openOrderInitialMargin: money(orders),
          adl: 0,
          bidNotional: '0',
          askNotional: '0',
        })
      } else {
        Object.assign(row, {
          leverage: String(config.leverage),
          maxNotionalValue: String(maxNotional(ctx.brackets(name), config.leverage)),
          marginType: config.marginType,
          isAutoAddMargin: 'false',
        })
      }
      row.updateTime = p.updateTime
      return row
    })
}
