import { BinanceError, illegalCharacters, invalidSymbol, mandatory } from '../../common/errors.js'
import { type Query, required, text } from '../../common/params.js'
import type { SymbolInfo } from '../../market-data/recorded/exchange-info.js'
import type { Side, TimeInForce } from '../accounts/account.js'

/** A POST /fapi/v1/order request, parsed and checked against the symbol's filters. */
export interface OrderRequest {
  symbol: SymbolInfo
  side: Side
  type: 'MARKET' | 'LIMIT'
  timeInForce: TimeInForce
  quantity: number
  /** 0 for MARKET. */
  price: number
  reduceOnly: boolean
  clientOrderId: string | undefined
  respType: 'ACK' | 'RESULT'
}

/** Types that left this endpoint for /fapi/v1/algoOrder on 2025-12-09 (research 0.1). */
const CONDITIONAL = new Set(['STOP', 'STOP_MARKET', 'TAKE_PROFIT', 'TAKE_PROFIT_MARKET', 'TRAILING_STOP_MARKET'])
export const TIME_IN_FORCE = new Set(['GTC', 'IOC', 'FOK', 'GTX'])
/** Binance's newClientOrderId rule ("A unique id among open orders"); clientAlgoId follows the same. */
export const CLIENT_ORDER_ID = /^[.A-Z:/a-z0-9_-]{1,36}$/
const DECIMAL = /^\d{1,20}(\.\d{1,20})?$/

export const orderTypeNotSupported = () =>
  new BinanceError(400, -4120, 'Order type not supported for this endpoint. Please use the Algo Order API endpoints instead.')

/**
 * Reads the order parameters in Binance's order of checks: mandatory ones (-1102), enums (-1116
 * type, -4120 conditional types, -1117 side, -1115 timeInForce, -1136 respType), the one-way
 * position side (-4061), the client order id (-4015 length, -1100 characters), then the symbol's
 * filters: precision (-1111), tick and step (-4014, -4023), zero or less (-4003), PRICE_FILTER and
 * LOT_SIZE bounds (-1013), and MIN_NOTIONAL (-4164, reduce-only exempt) at `marketPrice` for MARKET.
 */
export function parseOrderRequest(query: Query, lookup: (symbol: string) => SymbolInfo | undefined, marketPrice: (symbol: SymbolInfo) => number): OrderRequest {
  const symbolName = required(query, 'symbol')
  const sideText = required(query, 'side')
  const typeText = required(query, 'type')
  const symbol = lookup(symbolName)
  if (!symbol) throw invalidSymbol()
  if (CONDITIONAL.has(typeText)) throw orderTypeNotSupported()
  if (typeText !== 'MARKET' && typeText !== 'LIMIT') throw new BinanceError(400, -1116, 'Invalid orderType.')
  if (sideText !== 'BUY' && sideText !== 'SELL') throw new BinanceError(400, -1117, 'Invalid side.')
  const type = typeText
  const positionSide = text(query, 'positionSide')
  if (positionSide !== undefined && positionSide !== 'BOTH') throw new BinanceError(400, -4061, "Order's position side does not match user's setting.")
  const tifText = type === 'LIMIT' ? required(query, 'timeInForce') : (text(query, 'timeInForce') ?? 'GTC')
  if (!TIME_IN_FORCE.has(tifText)) throw new BinanceError(400, -1115, 'Invalid timeInForce.')
  const respText = text(query, 'newOrderRespType') ?? 'ACK'
  if (respText !== 'ACK' && respText !== 'RESULT') throw new BinanceError(400, -1136, 'Invalid newOrderRespType.')
  const reduceText = text(query, 'reduceOnly') ?? 'false'
  if (reduceText !== 'true' && reduceText !== 'false') throw mandatory('reduceOnly')
  const clientOrderId = clientIdParam(query, 'newClientOrderId')
  const quantity = quantityParam(query, symbol, type === 'MARKET')
  const price = type === 'LIMIT' ? priceParam(query, 'price', symbol) : 0
  const f = symbol.filters
  const reduceOnly = reduceText === 'true'
  const notional = quantity * (type === 'LIMIT' ? price : marketPrice(symbol))
  if (!reduceOnly && notional < f.minNotional * (1 - 1e-12)) {
    throw new BinanceError(400, -4164, `Order's notional must be no smaller than ${f.minNotionalText} (unless you choose reduce only).`)
  }
  return { symbol, side: sideText, type, timeInForce: tifText as TimeInForce, quantity, price, reduceOnly, clientOrderId, respType: respText }
}

/** A client id parameter (newClientOrderId, clientAlgoId): -4015 over 36 characters, -1100 outside Binance's characters. */
export function clientIdParam(query: Query, name: string): string | undefined {
  const id = text(query, name)
  if (id !== undefined && id.length > 36) throw new BinanceError(400, -4015, 'Client order id length should not be more than 36 chars')
  if (id !== undefined && !CLIENT_ORDER_ID.test(id)) {
    throw new BinanceError(400, -1100, `Illegal characters found in parameter '${name}'; legal range is '^[\\.A-Z\\:/a-z0-9_-]{1,36}$'.`)
  }
  return id
}

/** A quantity: on the step grid (-4023), above zero (-4003), within LOT_SIZE or, for market orders, MARKET_LOT_SIZE (-1013). */
export function quantityParam(query: Query, symbol: SymbolInfo, market: boolean): number {
  const quantity = decimalParam(query, 'quantity', symbol.quantityPrecision, symbol.stepSize, -4023, 'Qty not increased by step size.')
  if (quantity <= 0) throw new BinanceError(400, -4003, 'Quantity less than or equal to zero.')
  const f = symbol.filters
  const [minQty, maxQty] = market ? [f.marketMinQty, f.marketMaxQty] : [f.minQty, f.maxQty]
  if (quantity < minQty || quantity > maxQty) throw new BinanceError(400, -1013, `Filter failure: ${market ? 'MARKET_LOT_SIZE' : 'LOT_SIZE'}`)
  return quantity
}

/** A price (a limit price, a trigger, an activation price): on the tick grid (-4014), above zero (-4001), within PRICE_FILTER (-1013). */
export function priceParam(query: Query, name: string, symbol: SymbolInfo): number {
  const price = decimalParam(query, name, symbol.pricePrecision, symbol.tickSize, -4014, 'Price not increased by tick size.')
  if (price <= 0) throw new BinanceError(400, -4001, 'Price less than 0.')
  if (price < symbol.filters.minPrice || price > symbol.filters.maxPrice) throw new BinanceError(400, -1013, 'Filter failure: PRICE_FILTER')
  return price
}

/** A decimal parameter: -1102 missing, -1100 not a decimal, -1111 more places than the symbol's precision, the grid's own code off-grid. */
function decimalParam(query: Query, name: string, precision: number, grid: number, gridCode: number, gridMessage: string): number {
  const value = required(query, name)
  if (!DECIMAL.test(value)) throw illegalCharacters(name)
  const places = value.includes('.') ? value.split('.')[1]!.replace(/0+$/, '').length : 0
  if (places > precision) throw new BinanceError(400, -1111, 'Precision is over the maximum defined for this asset.')
  const number = Number(value)
  const steps = number / grid
  if (Math.abs(steps - Math.round(steps)) > 1e-6) throw new BinanceError(400, gridCode, gridMessage)
  return number
}
