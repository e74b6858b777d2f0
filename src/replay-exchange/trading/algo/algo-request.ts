import { BinanceError, invalidSymbol } from '../../common/errors.js'
import { type Query, required, text } from '../../common/params.js'
import type { SymbolInfo } from '../../market-data/recorded/exchange-info.js'
import type { TimeInForce } from '../accounts/account.js'
import { clientIdParam, priceParam, quantityParam, TIME_IN_FORCE } from '../orders/order-request.js'
import { ALGO_TYPES, type AlgoOrder, type AlgoOrderType } from './algo-order.js'

/** A POST /fapi/v1/algoOrder request, parsed and checked against the symbol's filters: the order's own fields, before it has ids and a status. */
export interface AlgoRequest
  extends Pick<AlgoOrder, 'side' | 'type' | 'timeInForce' | 'quantity' | 'price' | 'triggerPrice' | 'workingType' | 'closePosition' | 'priceProtect' | 'reduceOnly' | 'callbackRate'> {
  symbol: SymbolInfo
  /** undefined: the latest price at placement (trailing only). */
  activatePrice: number | undefined
  clientAlgoId: string | undefined
}

const invalid = (name: string) => new BinanceError(400, -1130, `Data sent for parameter '${name}' is not valid.`)

/** "true"/"false" in any case (Binance's docs write priceProtect "TRUE"/"FALSE"); -1130 otherwise. */
function flag(query: Query, name: string): boolean {
  const value = text(query, name)
  if (value === undefined) return false
  const lower = value.toLowerCase()
  if (lower !== 'true' && lower !== 'false') throw invalid(name)
  return lower === 'true'
}

/**
 * Reads New Algo Order's parameters in the order Binance checks a plain order's (research §1.2):
 * mandatory ones (-1102), algoType (-1130: CONDITIONAL only), type (-1116), side (-1117), one-way
 * position side (-4061), timeInForce (-1115), workingType (-1130), clientAlgoId (-4015 / -1100),
 * then closePosition against quantity and reduceOnly (-4137 / -4138; close-all only for the two
 * *_MARKET types, -4020), the trigger, limit and activation prices on the symbol's grid and filters,
 * the quantity on its step and LOT_SIZE (-4023, -1013), the trailing callbackRate 0.1–20 (-1130).
 */
export function parseAlgoRequest(query: Query, lookup: (symbol: string) => SymbolInfo | undefined): AlgoRequest {
  const algoType = required(query, 'algoType')
  const symbolName = required(query, 'symbol')
  const sideText = required(query, 'side')
  const typeText = required(query, 'type')
  if (algoType !== 'CONDITIONAL') throw invalid('algoType')
  const symbol = lookup(symbolName)
  if (!symbol) throw invalidSymbol()
  if (!(ALGO_TYPES as readonly string[]).includes(typeText)) throw new BinanceError(400, -1116, 'Invalid orderType.')
  const type = typeText as AlgoOrderType
  if (sideText !== 'BUY' && sideText !== 'SELL') throw new BinanceError(400, -1117, 'Invalid side.')
  const positionSide = text(query, 'positionSide')
  if (positionSide !== undefined && positionSide !== 'BOTH') throw new BinanceError(400, -4061, "Order's position side does not match user's setting.")
  const tifText = text(query, 'timeInForce') ?? 'GTC'
  if (!TIME_IN_FORCE.has(tifText)) throw new BinanceError(400, -1115, 'Invalid timeInForce.')
  const workingText = text(query, 'workingType') ?? 'CONTRACT_PRICE'
  if (workingText !== 'MARK_PRICE' && workingText !== 'CONTRACT_PRICE') throw invalid('workingType')
  const respText = text(query, 'newOrderRespType') ?? 'ACK'
  if (respText !== 'ACK' && respText !== 'RESULT') throw new BinanceError(400, -1136, 'Invalid newOrderRespType.')
  const clientAlgoId = clientIdParam(query, 'clientAlgoId')
  const closePosition = flag(query, 'closePosition')
  const reduceOnly = flag(query, 'reduceOnly')
  const priceProtect = flag(query, 'priceProtect')
  const market = type === 'STOP_MARKET' || type === 'TAKE_PROFIT_MARKET'
  const trailing = type === 'TRAILING_STOP_MARKET'
  if (closePosition) {
    if (!market) throw new BinanceError(400, -4020, `Target strategy invalid for orderType ${type},closePosition true`)
    if (text(query, 'quantity') !== undefined) throw new BinanceError(400, -4137, 'Quantity must be zero with closePosition equals true.')
    if (text(query, 'reduceOnly') !== undefined) throw new BinanceError(400, -4138, 'Reduce only must be true with closePosition equals true.')
  }
  const triggerPrice = trailing ? 0 : priceParam(query, 'triggerPrice', symbol)
  const price = type === 'STOP' || type === 'TAKE_PROFIT' ? priceParam(query, 'price', symbol) : 0
  // Binance renamed activationPrice to activatePrice on 2025-12-19 (connector 21.0.0); ccxt 4.5 still sends the old name.
  const activateName = text(query, 'activatePrice') !== undefined ? 'activatePrice' : 'activationPrice'
  const activatePrice = trailing && text(query, activateName) !== undefined ? priceParam(query, activateName, symbol) : undefined
  let callbackRate = 0
  if (trailing) {
    const rate = Number(required(query, 'callbackRate'))
    if (!(rate >= 0.1 && rate <= 20)) throw invalid('callbackRate')
    callbackRate = rate
  }
  const quantity = closePosition ? 0 : quantityParam(query, symbol, market || trailing)
  return {
    symbol,
    side: sideText,
    type,
    timeInForce: tifText as TimeInForce,
    quantity,
    price,
    triggerPrice,
    workingType: workingText,
    closePosition,
    priceProtect,
    reduceOnly,
    activatePrice,
    callbackRate,
    clientAlgoId,
  }
}
