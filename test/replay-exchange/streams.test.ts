import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import WebSocket from 'ws'
import { MINUTE, poll, SNAPSHOT_TIME, startTestExchange, type TestExchange } from './support.js'

interface KlineEvent {
  e: 'kline'
  E: number
  s: string
  k: {
    t: number
    T: number
    s: string
    i: string
    f: number
    L: number
    o: string
    c: string
    h: string
    l: string
    v: string
    n: number
    x: boolean
    q: string
    V: string
    Q: string
    B: string
  }
}
interface MarkEvent {
  e: 'markPriceUpdate'
  E: number
  s: string
  p: string
  i: string
  P: string
  r: string
  T: number
}

/** A WebSocket client that keeps every message it receives. */
class Client {
  readonly messages: unknown[] = []
  readonly socket: WebSocket
  closed: { code: number; reason: string } | undefined
  constructor(url: string) {
    this.socket = new WebSocket(url)
    this.socket.on('message', (data) => this.messages.push(JSON.parse(String(data))))
    this.socket.on('close', (code, reason) => (this.closed = { code, reason: String(reason) }))
    this.socket.on('error', () => {})
  }
  opened(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.socket.once('open', () => resolve())
      this.socket.once('error', reject)
    })
  }
  /** Waits for a message satisfying `match`, returning it. */
  next<T>(what: string, match: (m: T) => boolean, timeoutMs = 5_000): Promise<T> {
    return poll(what, timeoutMs, () => (this.messages as T[]).find(match))
  }
  close(): void {
    this.socket.terminate()
  }
}

describe('replay exchange: WebSocket streams', () => {
  let t: TestExchange
  const clients: Client[] = []
  const connect = (path: string) => {
    const client = new Client(`${t.exchange.wsUrl}${path}`)
    clients.push(client)
    return client
  }
  before(async () => {
    t = await startTestExchange()
  })
  after(async () => {
    for (const client of clients) client.close()
    await t.close()
  })

  it('streams the open kline in Binance format and closes it with x: true as replay time passes', async () => {
    const client = connect('/ws/btcusdt@kline_1m')
    const first = await client.next<KlineEvent>('an open kline', (m) => m.e === 'kline')
    assert.equal(first.s, 'BTCUSDT')
    assert.equal(first.E, SNAPSHOT_TIME)
    const open = Math.floor(SNAPSHOT_TIME / MINUTE) * MINUTE
    assert.deepEqual(Object.keys(first.k).sort(), ['B', 'L', 'Q', 'T', 'V', 'c', 'f', 'h', 'i', 'l', 'n', 'o', 'q', 's', 't', 'v', 'x'].sort())
    assert.equal(first.k.t, open)
    assert.equal(first.k.T, open + MINUTE - 1)
    assert.equal(first.k.i, '1m')
    assert.equal(first.k.x, false)
    assert.equal(first.k.n, first.k.L - first.k.f + 1)
    const [trade] = (await t.get<{ price: string }[]>('/fapi/v1/trades?symbol=BTCUSDT&limit=1')).body
    assert.equal(first.k.c, trade!.price)

    t.clock.advance(MINUTE)
    const closed = await client.next<KlineEvent>('the closed kline', (m) => m.e === 'kline' && m.k.t === open && m.k.x)
    const [recorded] = (await t.get<unknown[][]>(`/fapi/v1/klines?symbol=BTCUSDT&interval=1m&startTime=${open}&limit=1`)).body
    assert.deepEqual([closed.k.o, closed.k.h, closed.k.l, closed.k.c, closed.k.v], recorded!.slice(1, 6))
    const next = await client.next<KlineEvent>('the next open kline', (m) => m.e === 'kline' && m.k.t === open + MINUTE)
    assert.equal(next.k.x, false)
    assert.ok(client.messages.indexOf(closed) < client.messages.indexOf(next))
  })

  it('a marketEvents "drop" fault silences the matching streams’ closed klines, N times, and leaves the others', async () => {
    const eth = connect('/ws/ethusdt@kline_1m')
    const btc = connect('/ws/btcusdt@kline_1m')
    await eth.next('an open ETHUSDT kline', (m: KlineEvent) => m.e === 'kline')
    const open = (await btc.next<KlineEvent>('an open BTCUSDT kline', (m) => m.e === 'kline')).k.t
    const remove = t.exchange.faults.add({ marketEvents: 'drop', path: 'ethusdt@kline_1m', times: 2 })
    const closedOf = (client: Client) => (client.messages as KlineEvent[]).filter((m) => m.e === 'kline' && m.k.x && m.k.t >= open).map((m) => m.k.t)
    for (let k = 1; k <= 3; k++) {
      t.clock.advance(MINUTE)
      await btc.next(`BTCUSDT's closed kline ${k}`, (m: KlineEvent) => m.e === 'kline' && m.k.x && m.k.t === open + (k - 1) * MINUTE)
    }
    await eth.next('the first ETHUSDT kline after the fault', (m: KlineEvent) => m.e === 'kline' && m.k.x && m.k.t === open + 2 * MINUTE)
    assert.deepEqual(closedOf(btc), [open, open + MINUTE, open + 2 * MINUTE])
    assert.deepEqual(closedOf(eth), [open + 2 * MINUTE], 'the first two closed ETHUSDT klines were dropped')
    assert.equal(t.exchange.faults.active().length, 0, 'the fault was used up')
    remove()
  })

  it('streams mark prices, raw and combined, every second for @1s', async () => {
    const raw = connect('/ws/ethusdt@markPrice@1s')
    const first = await raw.next<MarkEvent>('a mark price', (m) => m.e === 'markPriceUpdate')
    assert.equal(first.s, 'ETHUSDT')
    const premium = (await t.get<{ markPrice: string; lastFundingRate: string; nextFundingTime: number }>('/fapi/v1/premiumIndex?symbol=ETHUSDT')).body
    assert.equal(first.r, premium.lastFundingRate)
    assert.equal(first.T, premium.nextFundingTime)
    assert.ok(Math.abs(Number(first.p) / Number(premium.markPrice) - 1) < 0.001)
    assert.match(first.p, /^\d+\.\d{8}$/)
    await raw.next('a second update', () => raw.messages.length >= 2, 3_000)

    const combined = connect('/stream?streams=btcusdt@markPrice/xrpusdt@kline_1h')
    const wrapped = await combined.next<{ stream: string; data: MarkEvent }>('a wrapped mark price', (m) => m.stream === 'btcusdt@markPrice')
    assert.equal(wrapped.data.e, 'markPriceUpdate')
    assert.equal(wrapped.data.s, 'BTCUSDT')
    const kline = await combined.next<{ stream: string; data: KlineEvent }>('a wrapped kline', (m) => m.stream === 'xrpusdt@kline_1h')
    assert.equal(kline.data.k.i, '1h')

    const all = connect('/ws/!markPrice@arr')
    const marks = await all.next<MarkEvent[]>('all mark prices', (m) => Array.isArray(m))
    assert.ok(marks.length > 400)
    assert.ok(marks.some((m) => m.s === 'BTCUSDC' && m.e === 'markPriceUpdate'))
  })

  it('takes SUBSCRIBE, LIST_SUBSCRIPTIONS and UNSUBSCRIBE requests', async () => {
    const client = connect('/ws')
    await client.opened()
    client.socket.send(JSON.stringify({ method: 'SUBSCRIBE', params: ['solusdt@kline_1d'], id: 7 }))
    await client.next<{ result: null; id: number }>('the SUBSCRIBE answer', (m) => m.id === 7 && m.result === null)
    const kline = await client.next<KlineEvent>('a kline', (m) => m.e === 'kline')
    assert.equal(kline.s, 'SOLUSDT')
    client.socket.send(JSON.stringify({ method: 'LIST_SUBSCRIPTIONS', id: 8 }))
    const list = await client.next<{ result: string[]; id: number }>('the list', (m) => m.id === 8)
    assert.deepEqual(list.result, ['solusdt@kline_1d'])
    client.socket.send(JSON.stringify({ method: 'SUBSCRIBE', params: ['nope@kline_1m'], id: 9 }))
    const error = await client.next<{ error: { code: number }; id: number }>('the error', (m) => m.id === 9)
    assert.equal(error.error.code, 2)
  })

  it('ignores a path name that is no stream, as Binance does, and still takes SUBSCRIBE there', async () => {
    // ccxt opens /market/ws/<its own counter> and subscribes on it.
    const client = connect('/market/ws/0')
    await client.opened()
    client.socket.send(JSON.stringify({ method: 'LIST_SUBSCRIPTIONS', id: 1 }))
    assert.deepEqual(await client.next<{ id: number }>('the empty list', (m) => m.id === 1), { result: [], id: 1 })
    client.socket.send(JSON.stringify({ method: 'SUBSCRIBE', params: ['btcusdt@kline_1m'], id: 2 }))
    const kline = await client.next<KlineEvent>('a kline', (m) => m.e === 'kline')
    assert.equal(kline.s, 'BTCUSDT')
    const typo = connect('/ws/nosuchusdt@kline_1m/btcusdt@markPrice')
    await typo.next<MarkEvent>('the valid stream of the two', (m) => m.e === 'markPriceUpdate')
    assert.equal(typo.closed, undefined)
    assert.ok(typo.messages.every((m) => (m as { e?: string }).e === 'markPriceUpdate'))
  })

  it("serves the streams on Binance's routed /market and /public paths, in ws and stream mode", async () => {
    for (const prefix of ['/market', '/public']) {
      const raw = connect(`${prefix}/ws/ethusdt@kline_5m`)
      const kline = await raw.next<KlineEvent>(`a kline on ${prefix}/ws`, (m) => m.e === 'kline')
      assert.deepEqual([kline.s, kline.k.i], ['ETHUSDT', '5m'])
      const combined = connect(`${prefix}/stream?streams=btcusdt@markPrice@1s`)
      const wrapped = await combined.next<{ stream: string; data: MarkEvent }>(`a mark price on ${prefix}/stream`, (m) => m.stream !== undefined)
      assert.equal(wrapped.stream, 'btcusdt@markPrice@1s')
      assert.equal(wrapped.data.s, 'BTCUSDT')
      const subscriber = connect(`${prefix}/stream`)
      await subscriber.opened()
      subscriber.socket.send(JSON.stringify({ method: 'SUBSCRIBE', params: ['xrpusdt@kline_1h'], id: 3 }))
      const event = await subscriber.next<{ stream: string; data: KlineEvent }>('a wrapped kline', (m) => m.stream === 'xrpusdt@kline_1h')
      assert.equal(event.data.k.s, 'XRPUSDT')
    }
  })

  it('drops stream connections on request, and faults apply to the upgrade', async () => {
    const client = connect('/ws/btcusdt@markPrice')
    await client.opened()
    assert.ok(t.exchange.faults.disconnectStreams() >= 1)
    await poll('the disconnect', 5_000, () => client.closed)
    t.exchange.faults.add({ path: '/ws', drop: true, times: 1 })
    const refused = connect('/ws/btcusdt@markPrice')
    await assert.rejects(refused.opened())
  })
})
