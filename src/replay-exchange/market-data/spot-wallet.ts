import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { ExchangeInfoSnapshot } from './recorded/exchange-info.js'

/**
 * The two spot-wallet (SAPI) endpoints ccxt calls while loading markets once API keys are set
 * (binance.js fetchCurrencies: GET /sapi/v1/capital/config/getall, and with its default
 * `fetchMargins: true` GET /sapi/v1/margin/allPairs). An account of the replay exchange is a futures
 * account only: its spot wallet holds nothing, no coin can be deposited or withdrawn (no networks),
 * and no spot pair can be traded on margin. Both are SIGNED as on Binance; `authorize` is the
 * trading wing's check. SAPI weight (its own 12,000 a minute) is not counted.
 */

/** One coin of /sapi/v1/capital/config/getall, with Binance's fields. */
export interface CapitalConfigRow {
  coin: string
  depositAllEnable: boolean
  withdrawAllEnable: boolean
  name: string
  free: string
  locked: string
  freeze: string
  withdrawing: string
  ipoing: string
  ipoable: string
  storage: string
  isLegalMoney: boolean
  trading: boolean
  networkList: unknown[]
}

/** Every asset of a trading symbol, ascending: the coins the futures market margins and quotes in. */
export function capitalConfig(exchangeInfo: ExchangeInfoSnapshot): CapitalConfigRow[] {
  const coins = new Set<string>()
  for (const info of exchangeInfo.symbols.values()) {
    if (info.status !== 'TRADING') continue
    coins.add(info.baseAsset)
    coins.add(info.quoteAsset)
  }
  return [...coins].sort().map((coin) => ({
    coin,
    depositAllEnable: false,
    withdrawAllEnable: false,
    name: coin,
    free: '0',
    locked: '0',
    freeze: '0',
    withdrawing: '0',
    ipoing: '0',
    ipoable: '0',
    storage: '0',
    isLegalMoney: false,
    trading: true,
    networkList: [],
  }))
}

export function spotWalletRoutes(app: FastifyInstance, exchangeInfo: ExchangeInfoSnapshot, authorize: (request: FastifyRequest) => void): void {
  const coins = capitalConfig(exchangeInfo)
  app.get('/sapi/v1/capital/config/getall', async (request) => {
    authorize(request)
    return coins
  })
  app.get('/sapi/v1/margin/allPairs', async (request) => {
    authorize(request)
    return []
  })
}
