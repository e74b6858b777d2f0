import type { FastifyInstance } from 'fastify'
import { BinanceError, invalidData, invalidSymbol } from '../../common/errors.js'
import { integer, limit, type Query, required, text, timeRange } from '../../common/params.js'
import { incomeView } from '../orders/order-views.js'
import { maxNotional } from '../positions/margin.js'
import { signedRoute, type TradingDeps, viewContext } from '../trading-context.js'
import { MAKER_RATE, TAKER_RATE } from '../venue.js'
import { accountV2, accountV3, balances, positionRisk } from './account-views.js'
import { configOf } from './account.js'

const INCOME_TYPES = new Set(['TRANSFER', 'REALIZED_PNL', 'FUNDING_FEE', 'COMMISSION', 'INSURANCE_CLEAR'])

/** Account views and settings: account, balance, positionRisk, leverageBracket, leverage, marginType, symbolConfig, accountConfig, positionSide/dual, commissionRate, income. */
export function accountRoutes(app: FastifyInstance, deps: TradingDeps): void {
  const symbolParam = (params: Query, optional = false) => {
    const name = optional ? text(params, 'symbol') : required(params, 'symbol')
    if (name !== undefined && !deps.market.get(name)) throw invalidSymbol()
    return name
  }
  signedRoute(app, deps, 'GET', '/fapi/v2/account', 5, ({ account }) => accountV2(account, viewContext(deps, account)))
  signedRoute(app, deps, 'GET', '/fapi/v3/account', 5, ({ account }) => accountV3(account, viewContext(deps, account)))
  for (const version of ['v2', 'v3']) {
    signedRoute(app, deps, 'GET', `/fapi/${version}/balance`, 5, ({ account }) => balances(account, viewContext(deps, account)))
    signedRoute(app, deps, 'GET', `/fapi/${version}/positionRisk`, 5, ({ account, params }) =>
      positionRisk(account, viewContext(deps, account), version === 'v3', symbolParam(params, true)),
    )
  }

  // Each symbol's own tiers (the data folder's snapshot; the recorded BTCUSDT sample for a symbol it
  // lacks; README "Accounts"). With `symbol` Binance's docs show one object, but the live API answers a
  // list of one (sieblyio/binance issue #310, 2023; Binance_Futures_python PR #119, 2021): the list is served.
  const bracketRow = (symbol: string) => ({
    symbol,
    notionalCoef: 1.0,
    brackets: deps.venue.brackets(symbol).map((b, i) => ({
      bracket: i + 1,
      initialLeverage: b.initialLeverage ?? 1,
      notionalCap: b.notionalCap,
      notionalFloor: b.notionalFloor,
      maintMarginRatio: b.maintMarginRatio,
      cum: b.cum,
    })),
  })
  signedRoute(app, deps, 'GET', '/fapi/v1/leverageBracket', 1, ({ params }) => {
    const symbol = symbolParam(params, true)
    if (symbol !== undefined) return [bracketRow(symbol)]
    return deps.market.all().map((s) => bracketRow(s.info.symbol))
  })

  signedRoute(app, deps, 'POST', '/fapi/v1/leverage', 1, ({ account, params }) => {
    const symbol = symbolParam(params)!
    const leverage = integer(params, 'leverage')
    if (leverage === undefined) throw new BinanceError(400, -1102, "Mandatory parameter 'leverage' was not sent, was empty/null, or malformed.")
    const brackets = deps.venue.brackets(symbol)
    const top = brackets[0]?.initialLeverage ?? 125
    if (leverage < 1 || leverage > top) throw new BinanceError(400, -4028, `Leverage ${leverage} is not valid`)
    account.config.set(symbol, { ...configOf(account, symbol), leverage })
    deps.venue.changed = true
    return { leverage, maxNotionalValue: String(maxNotional(brackets, leverage)), symbol }
  })

  signedRoute(app, deps, 'POST', '/fapi/v1/marginType', 1, ({ account, params }) => {
    const symbol = symbolParam(params)!
    const type = required(params, 'marginType')
    if (type !== 'ISOLATED' && type !== 'CROSSED') throw invalidData('marginType')
    const wanted = type === 'ISOLATED' ? 'isolated' : 'cross'
    const config = configOf(account, symbol)
    if (config.marginType === wanted) throw new BinanceError(400, -4046, 'No need to change margin type.')
    if ((account.positions.get(symbol)?.amount ?? 0) !== 0) throw new BinanceError(400, -4048, 'Margin type cannot be changed if there exists position.')
    for (const order of account.open.values()) {
      if (order.symbol === symbol) throw new BinanceError(400, -4047, 'Margin type cannot be changed if there exists open orders.')
    }
    account.config.set(symbol, { ...config, marginType: wanted })
    deps.venue.changed = true
    return { code: 200, msg: 'success' }
  })

  // ccxt's fetchLeverage and the v3 views' readers take leverage and margin type from here (v3 positionRisk drops them).
  signedRoute(app, deps, 'GET', '/fapi/v1/symbolConfig', 5, ({ account, params }) => {
    const symbol = symbolParam(params, true)
    const names = symbol !== undefined ? [symbol] : viewContext(deps, account).symbols()
    return names.map((name) => {
      const config = configOf(account, name)
      return {
        symbol: name,
        marginType: config.marginType === 'isolated' ? 'ISOLATED' : 'CROSSED',
        isAutoAddMargin: 'false',
        leverage: config.leverage,
        maxNotionalValue: String(maxNotional(deps.venue.brackets(name), config.leverage)),
      }
    })
  })
  signedRoute(app, deps, 'GET', '/fapi/v1/accountConfig', 5, () => ({
    feeTier: 0,
    canTrade: true,
    canDeposit: true,
    canWithdraw: true,
    dualSidePosition: false,
    updateTime: 0,
    multiAssetsMargin: false,
    tradeGroupId: -1,
  }))

  signedRoute(app, deps, 'GET', '/fapi/v1/positionSide/dual', 30, () => ({ dualSidePosition: false }))
  // One-way mode only: "false" is already set (-4059), "true" (Hedge Mode) is refused naming the parameter.
  signedRoute(app, deps, 'POST', '/fapi/v1/positionSide/dual', 1, ({ params }) => {
    const value = required(params, 'dualSidePosition')
    if (value === 'false') throw new BinanceError(400, -4059, 'No need to change position side.')
    throw new BinanceError(400, -1130, "Data sent for parameter 'dualSidePosition' is not valid. The replay exchange trades in One-way Mode only.")
  })

  signedRoute(app, deps, 'GET', '/fapi/v1/commissionRate', 20, ({ params }) => ({
    symbol: symbolParam(params),
    makerCommissionRate: String(MAKER_RATE),
    takerCommissionRate: String(TAKER_RATE),
  }))

  signedRoute(app, deps, 'GET', '/fapi/v1/income', 30, ({ account, params }) => {
    const symbol = symbolParam(params, true)
    const incomeType = text(params, 'incomeType')
    if (incomeType !== undefined && !INCOME_TYPES.has(incomeType)) throw invalidData('incomeType')
    const { startTime, endTime } = timeRange(params)
    const count = limit(params, 100, 1000)
    const rows = account.income.filter(
      (r) =>
        (symbol === undefined || r.symbol === symbol) &&
        (incomeType === undefined || r.incomeType === incomeType) &&
        (startTime === undefined || r.time >= startTime) &&
        (endTime === undefined || r.time <= endTime),
    )
    return (startTime === undefined ? rows.slice(-count) : rows.slice(0, count)).map(incomeView)
  })
}
