import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { pino } from 'pino'
import { loadConfig } from '../../src/config.js'
import { UserDataStreams, type UserStreamEvent } from '../../src/live/exchange/user-data-streams.js'
import { createMarketData, type MarketData } from '../../src/market/market-data.js'
import { BinanceTradingClient } from '../../src/trading/binance/trading-client.js'
import { type ReplayExchange, startReplay } from '../support/app.js'
import { tempDir } from '../support/database.js'
import { poll } from '../support/poll.js'
import { account } from './live-accounts.js'

// 600 replay minutes an hour: a listenKey's 60 minutes pass in 6 wall seconds.
const SPEED = 600
const MINUTE = 60_000
const KEEP = account('KEEP')
const OTHER = account('OTHER')

describe('user data streams of exchange accounts', () => {
  let replay: ReplayExchange
  let market: MarketData
  let streams: UserDataStreams
  const heard = new Map<string, UserStreamEvent[]>()
  const client = (a: typeof KEEP) => new BinanceTradingClient(market.client, { apiKey: a.apiKey, apiSecret: a.secretKey }, Date.now)
  const replayNow = async () => Number((JSON.parse((await market.client.get({ host: 'api', path: '/fapi/v1/time', query: '', weight: 1 }, performance.now() + 5_000)).body) as { serverTime: number }).serverTime)
  const connects = (name: string) => (heard.get(name) ?? []).filter((e) => e.type === 'connected').length
  const buy = async (a: typeof KEEP, clientOrderId: string) => {
    const placed = await client(a).placeOrder({ symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: '0.002', clientOrderId })
    assert.equal(placed.kind, 'ok')
    return poll(`the fill of ${clientOrderId} on the stream`, 10_000, () =>
      heard.get(a.apiKey)?.find((e) => e.type === 'order' && e.update.clientOrderId === clientOrderId && e.update.status === 'FILLED'),
    )
  }

  before(async () => {
    replay = await startReplay({ speed: SPEED, replayStart: Date.UTC(2025, 5, 17, 6), accounts: [KEEP, OTHER].map((a) => ({ ...a, balances: { USDT: '10000' } })) })
    market = createMarketData(loadConfig({ UPSTREAM_URL: replay.url, LOG_LEVEL: 'silent', DATA_DIR: tempDir('uds') }), Date.now)
    streams = new UserDataStreams({ wsUrl: replay.wsUrl, exchangeNow: replayNow, log: pino({ level: 'silent' }) })
    for (const a of [KEEP, OTHER]) {
      heard.set(a.apiKey, [])
      streams.subscribe(a.apiKey, client(a), (event) => heard.get(a.apiKey)!.push(event))
    }
  })
  after(async () => {
    streams.close()
    await market.close()
    await replay.close()
  })

  it('hears its orders and positions, parsed', async () => {
    await poll('both connected', 10_000, () => (connects(KEEP.apiKey) === 1 && connects(OTHER.apiKey) === 1 ? true : undefined))
    const fill = await buy(KEEP, 'uds-1')
    assert.equal(fill.type === 'order' && fill.update.executedQty, 0.002)
    assert.ok(fill.type === 'order' && fill.update.avgPrice > 0 && fill.update.side === 'BUY' && fill.update.symbol === 'BTCUSDT')
    const position = await poll('the position', 5_000, () => heard.get(KEEP.apiKey)!.find((e) => e.type === 'position' && e.symbol === 'BTCUSDT'))
    assert.equal(position.type === 'position' && position.amount, 0.002)
    assert.equal(heard.get(OTHER.apiKey)!.filter((e) => e.type !== 'connected').length, 0, "one account's events reach only its listeners")
  })

  it('keeps the listenKey alive past its 60 exchange minutes: one connection, events still flowing', async () => {
    const start = await replayNow()
    await poll('75 exchange minutes', 20_000, async () => ((await replayNow()) > start + 75 * MINUTE ? true : undefined))
    assert.equal(connects(KEEP.apiKey), 1, 'never expired, so never reconnected')
    await buy(KEEP, 'uds-2')
  })

  it('on listenKeyExpired opens a new key, reconnects and says so; on a closed socket too', async () => {
    assert.equal(replay.faults.expireListenKeys(KEEP.apiKey), 1)
    await poll('a second connection', 10_000, () => (connects(KEEP.apiKey) === 2 ? true : undefined))
    await buy(KEEP, 'uds-3')
    assert.equal(replay.faults.closeUserStreams(KEEP.apiKey), 1)
    await poll('a third connection', 10_000, () => (connects(KEEP.apiKey) === 3 ? true : undefined))
    await buy(KEEP, 'uds-4')
    assert.equal(connects(OTHER.apiKey), 1, 'the other account was left alone')
  })

  it("closes an account's socket when its last listener leaves, not before", async () => {
    const brief = account('BRIEF')
    replay.accounts.create({ ...brief, balances: { USDT: '1000' } })
    let connected = 0
    const first = streams.subscribe('brief', client(brief), () => undefined)
    const second = streams.subscribe('brief', client(brief), (e) => void (e.type === 'connected' && connected++))
    await poll('connected', 10_000, () => (connected === 1 ? true : undefined))
    first()
    assert.equal(replay.faults.closeUserStreams(brief.apiKey), 1, 'still open for the second listener')
    await poll('reconnected for the second listener', 10_000, () => (connected === 2 ? true : undefined))
    second()
    await poll('the socket closed with the last listener', 5_000, () => (replay.faults.closeUserStreams(brief.apiKey) === 0 ? true : undefined))
  })
})
