import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { pino } from 'pino'
import WebSocket from 'ws'
import { RunnerPool } from '../../src/live/runner/runner-pool.js'
import { activeRun } from '../../src/live/queries.js'
import { enterError } from '../../src/live/run-error.js'
import { poll } from '../support/poll.js'
import { deployFastDryRun } from './backtest-parity.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import { type KeyPair, signedHeaders } from '../support/signing.js'

// 1m bars close five times a wall second from 2025-06-17 06:00 UTC (inside the recorded minutes).
const REPLAY = { speed: 300, replayStart: Date.UTC(2025, 5, 17, 6, 0, 0) }

interface Message {
  type: string
  strategy_id: string
  time: string
  data: Record<string, unknown>
}

for (const backend of backends()) {
  describe(`strategy status stream (${backend})`, () => {
    let t: TestApp
    let pool: RunnerPool
    let base: string
    let key: KeyPair
    let other: KeyPair
    before(async () => {
      t = await startTestApp(backend, {}, { replay: REPLAY })
      pool = new RunnerPool({ db: t.database.handle.db, market: t.services.market, wsUrl: t.replay!.wsUrl, log: pino({ level: 'silent' }), signals: t.services.runSignals })
      pool.start()
      await t.app.listen({ host: '127.0.0.1', port: 0 })
      const address = t.app.server.address() as { port: number }
      base = `127.0.0.1:${address.port}`
      key = await t.createKey(['strategies:read', 'strategies:write'])
      other = await t.createKey(['strategies:read', 'strategies:write'])
    })
    after(async () => {
      await pool.stop()
      await t.close()
    })

    /** Opens the stream; resolves with the collected messages once open, or rejects with the HTTP status of a refusal. */
    const open = (path: string, headers: Record<string, string> = {}) =>
      new Promise<{ socket: WebSocket; messages: Message[] }>((resolve, reject) => {
        const socket = new WebSocket(`ws://${base}${path}`, { headers })
        const messages: Message[] = []
        socket.on('message', (data) => messages.push(JSON.parse(String(data)) as Message))
        socket.on('open', () => resolve({ socket, messages }))
        socket.on('unexpected-response', (_request, response) => reject(Object.assign(new Error(`HTTP ${response.statusCode}`), { status: response.statusCode })))
        socket.on('error', reject)
      })
    const signedOpen = (k: KeyPair, path: string) => {
      t.clock.advance(1)
      return open(path, signedHeaders(k, 'GET', path, '', t.clock.now()))
    }
    const refusal = async (promise: Promise<unknown>) => {
      const error = await promise.then(() => undefined, (e: { status?: number }) => e)
      return error?.status
    }

    it('sends the current status first, then orders and positions as bars close; pause with close_positions is flat and its messages come before its answer', async () => {
      const id = await deployFastDryRun(t, key)
      const path = `/v1/strategies/${id}/stream`
      const { socket, messages } = await signedOpen(key, path)
      await poll('the first message', 5_000, () => messages[0])
      assert.equal(messages[0]!.type, 'status')
      assert.equal(messages[0]!.strategy_id, id)
      assert.equal(messages[0]!.data.status, 'deployed')
      assert.match(messages[0]!.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)

      await poll('an order and an opened position on the stream', 60_000, () =>
        messages.some((m) => m.type === 'order') && messages.some((m) => m.type === 'position_opened') ? true : undefined,
      )
      const order = messages.find((m) => m.type === 'order')!
      assert.match(String(order.data.client_order_id), new RegExp(`^pp-${id.slice(6)}-1-\\d+$`))
      assert.equal(order.data.status, 'filled')
      const db = t.database.handle.db
      await poll('an open position', 30_000, async () =>
        (await db.selectFrom('strategies').select('stat_open_positions').where('id', '=', id).executeTakeFirstOrThrow()).stat_open_positions === 1 ? true : undefined,
      )

      const seenBefore = messages.length
      // The runner stamps rows with the wall clock; the app's test clock must not lag it, or the close would not sort newest.
      t.clock.value = Math.max(t.clock.value, Date.now()) + 1
      const body = JSON.stringify({ close_positions: true })
      const response = await fetch(`http://${base}/v1/strategies/${id}/pause`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...signedHeaders(key, 'POST', `/v1/strategies/${id}/pause`, body, t.clock.now()) },
        body,
      })
      // Read synchronously after the answer: whatever the stream delivered is already in `messages`.
      const atAnswer = messages.slice(seenBefore).map((m) => m.type)
      assert.equal(response.status, 200)
      const paused = (await response.json()) as { status: string; stats: { open_positions: number } }
      assert.equal(paused.status, 'paused')
      assert.equal(paused.stats.open_positions, 0)
      assert.ok(atAnswer.includes('position_closed'), `position_closed before the answer: ${atAnswer.join(', ')}`)
      assert.equal(atAnswer.at(-1), 'status', 'the paused status closes the sequence')
      const last = messages[seenBefore + atAnswer.length - 1]!
      assert.equal(last.data.status, 'paused')
      assert.equal((last.data.stats as { open_positions: number }).open_positions, 0)
      const closed = messages.slice(seenBefore).find((m) => m.type === 'position_closed')!
      assert.equal(closed.data.strategy_id, id)
      socket.close()

      // The run's ledger is flat too, and the close is the newest fill, reduce-only (a runner's intent stamped by
      // the wall clock may sort after it: the app runs on the test clock).
      const run = await db.selectFrom('strategy_runs').select('state').where('strategy_id', '=', id).executeTakeFirstOrThrow()
      assert.equal((run.state as { broker: { ledger: { arrays: { qty: number[] } } } }).broker.ledger.arrays.qty[0], 0)
      const orders = await t.signed(key, 'GET', `/v1/strategies/${id}/orders?limit=1`)
      assert.equal(orders.statusCode, 200, orders.body)
      const page = orders.json() as { data: { reduce_only: boolean; status: string; created_at: string }[]; next_cursor: string }
      assert.ok(page.next_cursor)
      const filled = ((await t.signed(key, 'GET', `/v1/strategies/${id}/orders?limit=100`)).json() as typeof page).data.filter((o) => o.status === 'filled')
      assert.equal(filled[0]!.reduce_only, true)
      const all: { client_order_id: string; created_at: string }[] = []
      for (let cursor: string | null = null, i = 0; i < 100; i++) {
        const res = await t.signed(key, 'GET', `/v1/strategies/${id}/orders?limit=3${cursor ? `&cursor=${cursor}` : ''}`)
        const p = res.json() as { data: { client_order_id: string; created_at: string }[]; next_cursor: string | null }
        all.push(...p.data)
        cursor = p.next_cursor
        if (!cursor) break
      }
      const stored = await t.database.handle.db.selectFrom('strategy_orders').select('client_order_id').where('strategy_id', '=', id).execute()
      assert.equal(all.length, stored.length, 'paging visits every order once')
      assert.equal(new Set(all.map((o) => o.client_order_id)).size, stored.length)
      assert.ok(all.every((o, i) => i === 0 || o.created_at <= all[i - 1]!.created_at), 'newest first')

      const trades = (await t.signed(key, 'GET', `/v1/strategies/${id}/trades?limit=100`)).json() as { data: { id: number; exit_reason: string }[] }
      const count = await t.database.handle.db.selectFrom('strategy_trades').select('id').where('strategy_id', '=', id).execute()
      assert.equal(trades.data.length, count.length)
      assert.deepEqual(trades.data.map((tr) => tr.id), [...trades.data.map((tr) => tr.id)].sort((a, b) => b - a))
      const firstPage = (await t.signed(key, 'GET', `/v1/strategies/${id}/trades?limit=1`)).json() as { data: { id: number }[]; next_cursor: string }
      assert.ok(count.length >= 1, 'the close made a trade')
      if (count.length === 1) assert.equal(firstPage.next_cursor, null)
      else {
        const second = (await t.signed(key, 'GET', `/v1/strategies/${id}/trades?limit=1&cursor=${firstPage.next_cursor}`)).json() as { data: { id: number }[] }
        assert.equal(second.data[0]!.id, firstPage.data[0]!.id - 1)
      }
      assert.equal((await t.signed(other, 'GET', `/v1/strategies/${id}/trades`)).statusCode, 404)
      assert.equal((await t.signed(other, 'GET', `/v1/strategies/${id}/orders`)).statusCode, 404)
      const bad = await t.signed(key, 'GET', `/v1/strategies/${id}/orders?cursor=nope!`)
      assert.equal(bad.statusCode, 400)
      assert.equal((await t.signed(key, 'GET', `/v1/strategies/${id}/trades?cursor=${Buffer.from('["2025-01-01T00:00:00.000Z","x"]').toString('base64url')}`)).statusCode, 400)
    })

    it('a run that enters error ends, says so on the stream (error, then status) and as strategy.error; an edit returns it to draft', async () => {
      const created = await t.signed(key, 'POST', '/v1/strategies', { name: 'slow', template_id: 'sma_cross', params: { fast: 3, slow: 8 }, symbols: ['XRPUSDT'], timeframe: '1h', capital: '300' })
      const id = created.json().id as string
      assert.equal((await t.signed(key, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true })).statusCode, 200)
      const { socket, messages } = await signedOpen(key, `/v1/strategies/${id}/stream`)
      await poll('the status', 5_000, () => messages[0])
      const db = t.database.handle.db
      await db.transaction().execute(async (trx) => enterError(trx, (await activeRun(trx, id, true))!, { code: 'POSITION_UNEXPLAINED', message: 'the exchange holds 0.5 BTCUSDT we never ordered' }, new Date(t.clock.now())))
      await poll('the error and status messages', 5_000, () => (messages.length >= 3 ? true : undefined))
      assert.deepEqual(messages.slice(1).map((m) => [m.type, m.data.status ?? m.data.code]), [['error', 'POSITION_UNEXPLAINED'], ['status', 'error']])
      socket.close()
      const event = await db.selectFrom('events').select('data').where('type', '=', 'strategy.error').executeTakeFirstOrThrow()
      assert.deepEqual(event.data, { strategy_id: id, code: 'POSITION_UNEXPLAINED', message: 'the exchange holds 0.5 BTCUSDT we never ordered' })
      assert.equal(await activeRun(db, id), undefined, 'the run ended')
      assert.equal((await t.signed(key, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true })).statusCode, 409)
      assert.equal((await t.signed(key, 'PATCH', `/v1/strategies/${id}`, { name: 'slow, checked' })).json().status, 'draft')
    })

    it('authenticates the upgrade: none → 401, another user → 404, Bearer-less browsers use a one-time ticket valid 30 s', async () => {
      const created = await t.signed(key, 'POST', '/v1/strategies', { name: 'idle', template_id: 'sma_cross', params: { fast: 3, slow: 8 }, symbols: ['ETHUSDT'], timeframe: '1h', capital: '500' })
      const id = created.json().id as string
      const path = `/v1/strategies/${id}/stream`
      assert.equal(await refusal(open(path)), 401)
      const plain = await t.signed(key, 'GET', path)
      assert.equal(plain.statusCode, 400, 'a GET without Upgrade is told what the endpoint is')
      assert.match(plain.json().error.message, /WebSocket/)
      assert.equal(await refusal(signedOpen(other, path)), 404)
      assert.equal(await refusal(open(`${path}?ticket=v1.forged`)), 401)

      const issued = await t.signed(key, 'POST', `/v1/strategies/${id}/stream-ticket`)
      assert.equal(issued.statusCode, 200, issued.body)
      const { ticket, expires_at } = issued.json() as { ticket: string; expires_at: string }
      assert.equal(Date.parse(expires_at), t.clock.now() + 30_000)
      assert.equal((await t.signed(other, 'POST', `/v1/strategies/${id}/stream-ticket`)).statusCode, 404)
      const { socket, messages } = await open(`${path}?ticket=${encodeURIComponent(ticket)}`)
      await poll('the status', 5_000, () => messages[0])
      assert.deepEqual([messages[0]!.type, messages[0]!.data.status], ['status', 'draft'])
      socket.close()
      assert.equal(await refusal(open(`${path}?ticket=${encodeURIComponent(ticket)}`)), 401, 'a ticket opens one stream only')

      const late = (await t.signed(key, 'POST', `/v1/strategies/${id}/stream-ticket`)).json() as { ticket: string }
      t.clock.advance(30_001)
      assert.equal(await refusal(open(`${path}?ticket=${encodeURIComponent(late.ticket)}`)), 401, 'expired')
    })
  })
}
