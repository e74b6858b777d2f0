import websocket from '@fastify/websocket'
import Fastify, { type FastifyInstance } from 'fastify'
import { loadAccountsFile, type ReplayAccount } from './trading/accounts/accounts-file.js'
import { defaultReplayStart, recordingSpan, ReplayClock } from './common/clock.js'
import { controlRoutes } from './common/control-routes.js'
import { defaultDataDir, scanDataDir } from './market-data/recorded/data-files.js'
import { BinanceError } from './common/errors.js'
import { loadExchangeInfo, loadLeverageBrackets, loadPremiumSnapshot } from './market-data/recorded/exchange-info.js'
import { type FaultInjector, Faults } from './common/faults.js'
import { Market } from './market-data/market.js'
import { WeightLimiter } from './common/rate-limit.js'
import { installRequestHooks, RequestStats } from './common/request-hooks.js'
import { archiveRoutes } from './market-data/archive.js'
import { derivedRoutes } from './market-data/derived-routes.js'
import { spotWalletRoutes } from './market-data/spot-wallet.js'
import { marketRouter, restRoutes } from './market-data/rest-routes.js'
import { StreamHub } from './market-data/streams.js'
import { accountControlRoutes, type AccountControl } from './trading/accounts/account-control.js'
import { authenticate } from './trading/signed.js'
import { startTradingWing } from './trading/trading-wing.js'

export type { ReplayAccount } from './trading/accounts/accounts-file.js'
export type { FaultInjector, FaultSpec } from './common/faults.js'

export interface ReplayExchangeOptions {
  /** Default: the project's data/ folder. */
  dataDir?: string
  /** Default 127.0.0.1. */
  host?: string
  /** Default 0 (a free port). */
  port?: number
  /** Wall clock, injectable for tests; default Date.now. */
  now?: () => number
  /** Unix ms of recorded time that "now" maps to at start (default: see README "Time"). */
  replayStart?: number
  /** Recorded ms per wall ms, default 1. */
  speed?: number
  /** Accounts for the SIGNED endpoints, besides those of `<dataDir>/accounts.json`. */
  accounts?: ReplayAccount[]
  /** A JSON file that keeps the accounts' state (balances, positions, orders, trades) across restarts. */
  stateFile?: string
  /**
   * The order of a triggered algo order's events: `fill-first` (default; the child's ORDER_TRADE_UPDATE
   * fill before ALGO_UPDATE TRIGGERED and FINISHED, as nautilus#3664 saw) or `triggered-first`.
   */
  algoEvents?: 'fill-first' | 'triggered-first'
}

export interface ReplayExchange {
  /** http://127.0.0.1:PORT (REST: /fapi/... and /futures/data/...) */
  url: string
  /** ws://127.0.0.1:PORT (streams: [/market|/public]/ws/<stream> and [/market|/public]/stream?streams=a/b) */
  wsUrl: string
  faults: FaultInjector
  /** Create and fund accounts (as POST /__replay/accounts does over HTTP). */
  accounts: AccountControl
  /** Upstream call counts (REST requests under /fapi and /futures/data), for tests and benchmarks. */
  stats(): ReturnType<RequestStats['snapshot']>
  resetStats(): void
  close(): Promise<void>
}

/** Starts a Binance USD-M futures look-alike over recorded data, listening on host:port. */
export async function startReplayExchange(options: ReplayExchangeOptions = {}): Promise<ReplayExchange> {
  const dataDir = options.dataDir ?? defaultDataDir()
  const files = scanDataDir(dataDir)
  const configured = [...loadAccountsFile(dataDir), ...(options.accounts ?? [])]
  const exchangeInfo = loadExchangeInfo(files.exchangeInfo)
  const premium = files.premiumIndex ? loadPremiumSnapshot(files.premiumIndex) : undefined
  const market = new Market(files, exchangeInfo, premium, files.leverageBracket ? loadLeverageBrackets(files.leverageBracket) : undefined)
  const wallNow = options.now ?? Date.now
  const speed = options.speed ?? 1
  if (!(speed > 0)) throw new Error('replay exchange: speed must be positive')
  const span = recordingSpan(files.klines)
  const clock = new ReplayClock(wallNow, options.replayStart ?? defaultReplayStart(premium?.time, span), speed, span.end)
  const faults = new Faults()
  const stats = new RequestStats()
  const hub = new StreamHub(market, clock, faults)

  const app: FastifyInstance = Fastify({ logger: false, forceCloseConnections: true })
  await app.register(websocket)
  installRequestHooks(app, faults, stats)
  app.setErrorHandler((error, _request, reply) => {
    if (error instanceof BinanceError) return reply.code(error.status).headers(error.headers).send({ code: error.code, msg: error.message })
    // No logger is injected here (the options are the contract); a 500 is a bug, so say it loudly.
    process.stderr.write(`replay exchange: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    return reply.code(500).send({ code: -1000, msg: 'An unknown error occurred while processing the request.' })
  })
  app.setNotFoundHandler((request, reply) => reply.code(404).send({ code: -1000, msg: `Unknown path ${request.url.split('?')[0]}` }))
  const limiter = new WeightLimiter(wallNow)
  const restDeps = { market, exchangeInfo, clock, limiter }
  const router = marketRouter(app, restDeps)
  restRoutes(router, restDeps)
  derivedRoutes(router, restDeps)
  archiveRoutes(app, { market, clock, faults })
  const trading = startTradingWing(app, { market, clock, faults, limiter, accounts: configured, stateFile: options.stateFile, algoEvents: options.algoEvents })
  // ccxt calls these while loading markets when keys are set; signed as on Binance (SAPI USER_DATA).
  spotWalletRoutes(app, exchangeInfo, (request) => void authenticate(request, trading.signed))
  hub.routes(app, (socket, names) => trading.streams.claim(socket, names))
  controlRoutes(app, faults, stats, clock)
  const accounts = accountControlRoutes(app, trading)

  const address = new URL(await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 0 }))
  return {
    url: `http://${address.host}`,
    wsUrl: `ws://${address.host}`,
    faults: {
      add: (fault) => faults.add(fault),
      clear: () => faults.clear(),
      active: () => faults.active(),
      disconnectStreams: () => hub.disconnectAll() + trading.streams.closeSockets(),
      closeUserStreams: (apiKey) => trading.streams.closeSockets(apiKey),
      expireListenKeys: (apiKey) => trading.streams.expireNow(apiKey),
    },
    accounts,
    stats: () => stats.snapshot(),
    resetStats: () => stats.reset(),
    async close() {
      trading.close()
      hub.close()
      await app.close()
    },
  }
}

