import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import { BinanceTradingClient } from '../../src/trading/binance/trading-client.js'
import type { SignedInUser } from '../auth/bearer.js'
import type { TestApp } from '../support/app.js'
import { poll } from '../support/poll.js'

/** An account on the replay exchange: API key and secret as Binance spells them. */
export interface Account {
  apiKey: string
  secretKey: string
}

/** A fresh account whose key starts with `name` (so a failing test names the run it belongs to). */
export const account = (name: string): Account => ({
  apiKey: `${name}${crypto.randomBytes(32).toString('hex')}`.slice(0, 64),
  secretKey: `${name}S${crypto.randomBytes(32).toString('hex')}`.slice(0, 64),
})

export const LIVE_PARAMS = { fast: 3, slow: 8, allow_short: true }

/** The saved state of a live run as these tests read it. */
export interface LiveRunState {
  warmupFrom: number
  firstActive: number
  /** A one-symbol run's order whose outcome is not booked yet. */
  pendingOrder: string | null
  /** A many-symbol run's, by symbol. */
  pendingOrders?: Record<string, string>
  broker: { lastOpenTime: number | null; ledger: { arrays: { qty: number[] } } }
}

/** Nothing of the run waits for the exchange's answer (one symbol or many). */
export const nothingPending = (s: LiveRunState): boolean => (s.pendingOrder ?? null) === null && Object.keys(s.pendingOrders ?? {}).length === 0

/** What the live tests read and do beside the app: the exchange as the account holder sees it, and our ledger. */
export function liveHarness(t: () => TestApp, user: () => SignedInUser) {
  const db = () => t().database.handle.db
  const call = (method: 'GET' | 'POST', url: string, payload?: object) => {
    // Deploy reads the balance signed with the app's clock: keep it at wall time (the replay's window).
    t().clock.value = Date.now()
    return t().app.inject({ method, url, headers: user().headers, ...(payload ? { payload } : {}) })
  }
  const exchange = (a: Account) => new BinanceTradingClient(t().services.market.client, { apiKey: a.apiKey, apiSecret: a.secretKey }, Date.now)
  const orders = (id: string) => db().selectFrom('strategy_orders').selectAll().where('strategy_id', '=', id).orderBy('intent').execute()
  const harness = {
    db,
    call,
    exchange,
    orders,
    filled: async (id: string) => (await orders(id)).filter((o) => o.status === 'filled'),
    exchangeOrders: async (a: Account, symbol = 'BTCUSDT') => {
      const answer = await exchange(a).allOrders(symbol, { limit: 1000 })
      assert.equal(answer.kind, 'ok')
      return answer.kind === 'ok' ? answer.value : []
    },
    exchangeQty: async (a: Account, symbol = 'BTCUSDT') => {
      const answer = await exchange(a).positions(symbol)
      return answer.kind === 'ok' ? Number(answer.value[0]?.positionAmt ?? 0) : Number.NaN
    },
    runState: async (id: string) =>
      (await db().selectFrom('strategy_runs').select('state').where('strategy_id', '=', id).orderBy('run', 'desc').executeTakeFirst())?.state as LiveRunState | null | undefined,
    /** An sma_cross strategy on `symbol`, unless `fields` say otherwise (a many-symbol template, its symbols, capital). */
    create: async (name: string, symbol = 'BTCUSDT', fields: Record<string, unknown> = {}) => {
      const res = await call('POST', '/v1/strategies', { name, template_id: 'sma_cross', params: LIVE_PARAMS, symbols: [symbol], timeframe: '1m', capital: '1000', leverage: 2, ...fields })
      assert.equal(res.statusCode, 200, res.body)
      return res.json().id as string
    },
    deploy: async (id: string, keyId: string) => {
      const res = await call('POST', `/v1/strategies/${id}/deploy`, { dry_run: false, exchange_key_id: keyId })
      assert.equal(res.statusCode, 200, res.body)
    },
    registerKey: async (name: string, a: Account) => {
      const res = await call('POST', '/v1/exchange-keys', { api_key: a.apiKey, api_secret: a.secretKey, label: name })
      assert.equal(res.statusCode, 200, res.body)
      return res.json().id as string
    },
    /**
     * The exchange's orders and positions on the run's symbols beside the run's booked orders and ledger, read
     * between two equal reads of the run's state with nothing pending: a run that keeps trading cannot move
     * between the reads. exchangeQty and ledgerQty are the first symbol's; the ...Qtys every symbol's, in order.
     */
    quietPicture: (a: Account, id: string, symbols: readonly string[] = ['BTCUSDT']) =>
      poll('a quiet moment to compare the exchange with the ledger', 30_000, async () => {
        const before = await harness.runState(id)
        const sent: string[] = []
        for (const symbol of symbols) sent.push(...(await harness.exchangeOrders(a, symbol)).filter((o) => o.clientOrderId.startsWith('pp-')).map((o) => o.clientOrderId))
        const booked = (await harness.filled(id)).filter((o) => Number(o.qty) > 0).map((o) => o.client_order_id)
        const exchangeQtys: number[] = []
        for (const symbol of symbols) exchangeQtys.push(await harness.exchangeQty(a, symbol))
        const after = await harness.runState(id)
        if (!before || !nothingPending(before) || JSON.stringify(before) !== JSON.stringify(after)) return undefined
        const ledgerQtys = symbols.map((_, s) => after!.broker.ledger.arrays.qty[s]!)
        return { sent: sent.sort(), booked: booked.sort(), exchangeQty: exchangeQtys[0]!, ledgerQty: ledgerQtys[0]!, exchangeQtys, ledgerQtys }
      }),
    /** The exchange's clock (GET /fapi/v1/time): the replay runs faster than ours. */
    exchangeNow: async () => {
      const response = await t().services.market.client.get({ host: 'api', path: '/fapi/v1/time', query: '', weight: 1 }, performance.now() + 5_000)
      return Number((JSON.parse(response.body) as { serverTime: number }).serverTime)
    },
    /** The strategy.error event of one strategy. */
    errorOf: async (id: string) => {
      const events = await db().selectFrom('events').selectAll().where('type', '=', 'strategy.error').execute()
      return events.map((e) => e.data as { strategy_id: string; code: string; message: string }).find((d) => d.strategy_id === id)
    },
  }
  return harness
}

/** The hex of a strategy id, as its client order ids carry it (pp-<hex>-<run>-<intent>). */
export const hex = (id: string) => id.slice('strat_'.length)
