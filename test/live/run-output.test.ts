import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import WebSocket from 'ws'
import { RunnerPool } from '../../src/live/runner/runner-pool.js'
import { signIn, type SignedInUser } from '../auth/bearer.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import { type HttpsReceiver, startHttpsReceiver, testCertificates } from '../support/https-receiver.js'
import { poll } from '../support/poll.js'
import { memoryLogger } from '../support/secret-scan.js'
import { account, liveHarness } from './live-accounts.js'

// 1m bars close twice a wall second from 2025-06-17 06:00 UTC (inside the recorded minutes).
const REPLAY_START = Date.UTC(2025, 5, 17, 6, 0, 0)
const TRADER = account('DECIMALS')
const EVENTS = ['strategy.deployed', 'strategy.position_opened', 'strategy.position_closed', 'strategy.paused', 'strategy.error']

/** Names of fields that carry a price, a quantity, or money; every other decimal-looking string is checked for its form only. */
const PRICES = new Set(['price', 'entry_price', 'exit_price', 'mark_price', 'liquidation_price'])
const QUANTITIES = new Set(['qty'])
/** Money, and ratios (an order's target is a signed fraction of equity): at most 8 places. */
const MONEY = new Set(['fee', 'funding', 'pnl', 'total_pnl', 'unrealized_pnl', 'capital', 'equity', 'available', 'win_rate', 'target'])
/** A plain decimal of at most 8 places: no exponent, no float noise (which needs 10 to 17 places). */
const DECIMAL = /^-?(0|[1-9][0-9]*)(\.[0-9]{1,8})?$/

/** a / b has no remainder, computed on the decimal strings (never through a float). */
function isMultiple(value: string, step: string): boolean {
  const places = Math.max(value.split('.')[1]?.length ?? 0, step.split('.')[1]?.length ?? 0)
  const scaled = (s: string) => {
    const [whole, fraction = ''] = s.replace('-', '').split('.')
    return BigInt(whole! + fraction.padEnd(places, '0'))
  }
  return scaled(value) % scaled(step) === 0n
}

interface Checked {
  prices: number
  quantities: number
  money: number
  problems: string[]
}

/** Walks a JSON value (iteratively: no recursion on what the service sent) and checks every decimal string in it. */
function checkDecimals(where: string, value: unknown, rules: { tickSize: string; stepSize: string }, checked: Checked): void {
  const stack: { path: string; key: string; value: unknown }[] = [{ path: where, key: '', value }]
  while (stack.length > 0) {
    const item = stack.pop()!
    if (Array.isArray(item.value)) item.value.forEach((v, i) => stack.push({ path: `${item.path}[${i}]`, key: item.key, value: v }))
    else if (item.value !== null && typeof item.value === 'object') {
      for (const [k, v] of Object.entries(item.value)) stack.push({ path: `${item.path}.${k}`, key: k, value: v })
    } else if (typeof item.value === 'string' && (PRICES.has(item.key) || QUANTITIES.has(item.key) || MONEY.has(item.key) || /^-?[0-9.]+(e-?[0-9]+)?$/i.test(item.value))) {
      const text = item.value
      if (!DECIMAL.test(text)) {
        checked.problems.push(`${item.path} = "${text}" is not a decimal of at most 8 places`)
        continue
      }
      if (PRICES.has(item.key)) {
        checked.prices++
        if (!isMultiple(text, rules.tickSize)) checked.problems.push(`${item.path} = "${text}" is not a multiple of the tick ${rules.tickSize}`)
      } else if (QUANTITIES.has(item.key)) {
        checked.quantities++
        if (!isMultiple(text, rules.stepSize)) checked.problems.push(`${item.path} = "${text}" is not a multiple of the step ${rules.stepSize}`)
      } else if (MONEY.has(item.key)) checked.money++
    }
  }
}

for (const backend of backends()) {
  describe(`what a run emits (${backend})`, () => {
    let t: TestApp
    let pool: RunnerPool
    let user: SignedInUser
    let receiver: HttpsReceiver
    const log = memoryLogger()
    const streams = new Map<string, { socket: WebSocket; messages: unknown[] }>()
    let dry = ''
    let live = ''
    const harness = liveHarness(
      () => t,
      () => user,
    )

    before(async () => {
      receiver = await startHttpsReceiver()
      t = await startTestApp(
        backend,
        { WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true', WEBHOOK_CA_FILE: testCertificates().caFile, RATE_LIMIT_WEIGHT_PER_MINUTE: '1000000' },
        {
          replay: { speed: 120, replayStart: REPLAY_START, accounts: [{ ...TRADER, balances: { USDT: '10000' } }] },
          queue: 'workers',
          config: { webhookTimeoutMs: 1000 },
          logger: log.logger,
        },
      )
      // The server's log: the app's and its runners'. The runners hear of a deploy or pause only at their next
      // lease round, as runners in another process (`perpetua worker`) do: a paused live runner then hears its
      // run's close on the user stream before it learns the run ended.
      pool = new RunnerPool({ db: harness.db(), market: t.services.market, wsUrl: t.replay!.wsUrl, log: log.logger, secrets: t.services.secrets })
      pool.start()
      await t.app.listen({ host: '127.0.0.1', port: 0 })
      user = await signIn(t)
      const hook = await harness.call('POST', '/v1/webhooks', { url: `${receiver.url}/run`, events: EVENTS })
      assert.equal(hook.statusCode, 200, hook.body)
      const keyId = await harness.registerKey('decimals', TRADER)
      dry = await harness.create('dry')
      live = await harness.create('live')
      const port = (t.app.server.address() as { port: number }).port
      for (const id of [dry, live]) {
        const issued = await harness.call('POST', `/v1/strategies/${id}/stream-ticket`)
        assert.equal(issued.statusCode, 200, issued.body)
        const socket = new WebSocket(`ws://127.0.0.1:${port}/v1/strategies/${id}/stream?ticket=${issued.json().ticket}`)
        const messages: unknown[] = []
        socket.on('message', (data) => messages.push(JSON.parse(String(data))))
        await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
        streams.set(id, { socket, messages })
      }
      const deployed = await harness.call('POST', `/v1/strategies/${dry}/deploy`, { dry_run: true })
      assert.equal(deployed.statusCode, 200, deployed.body)
      await harness.deploy(live, keyId)
      // Both runs trade: closed trades (pnl, fees, funding), stats, orders, positions opened and closed.
      for (const id of [dry, live]) {
        await poll(`two closed trades of ${id}`, 120_000, async () => {
          const trades = await harness.db().selectFrom('strategy_trades').select('id').where('strategy_id', '=', id).execute()
          const state = await harness.runState(id)
          return trades.length >= 2 && state?.pendingOrder === null && state.broker.ledger.arrays.qty[0] !== 0 ? true : undefined
        })
      }
      for (const id of [dry, live]) {
        const runner = pool.runners.get(id)!
        const paused = await harness.call('POST', `/v1/strategies/${id}/pause`, { close_positions: true })
        assert.equal(paused.statusCode, 200, paused.body)
        // The runner learns its run ended (the next lease round) and finishes what it was doing: anything it
        // would log about the close it heard on the user stream is logged by then.
        await poll(`the runner of ${id} to stop`, 30_000, () => (pool.runners.has(id) ? undefined : true))
        await runner.idle()
      }
      assert.equal(await harness.exchangeQty(TRADER), 0, 'the pause closed the live position')
      // Every event of the two strategies reached the receiver.
      const stored = (await harness.db().selectFrom('events').select('data').where('type', 'like', 'strategy.%').execute()).filter((e) =>
        [dry, live].includes((e.data as { strategy_id?: string }).strategy_id ?? ''),
      )
      await poll('every strategy event at the receiver', 30_000, () => (receiver.received.filter((r) => r.path.endsWith('/run')).length >= stored.length ? true : undefined))
    })
    after(async () => {
      for (const { socket } of streams.values()) socket.close()
      await pool.stop()
      await t.close()
      await receiver.close()
    })

    it('a normal pause with close_positions, dry and live, logs no error', () => {
      const errors = log.lines().filter((line) => (JSON.parse(line.text) as { level: number }).level >= 50)
      assert.deepEqual(errors.map((line) => line.text), [])
    })

    it('every decimal of the answers, stream messages and webhook payloads of both runs is exact: prices at the tick, quantities at the step, money at most 8 places', async () => {
      const info = (await (await fetch(`${t.replay!.url}/fapi/v1/exchangeInfo`)).json()) as { symbols: { symbol: string; filters: Record<string, string>[] }[] }
      const filters = info.symbols.find((s) => s.symbol === 'BTCUSDT')!.filters
      const rules = { tickSize: filters.find((f) => f.filterType === 'PRICE_FILTER')!.tickSize!, stepSize: filters.find((f) => f.filterType === 'LOT_SIZE')!.stepSize! }
      const checked: Checked = { prices: 0, quantities: 0, money: 0, problems: [] }
      const answer = async (path: string) => {
        const res = await harness.call('GET', path)
        assert.equal(res.statusCode, 200, `${path}: ${res.body}`)
        return res.json() as { data?: unknown[]; next_cursor?: string | null }
      }
      checkDecimals('GET /v1/strategies', await answer('/v1/strategies?limit=100'), rules, checked)
      for (const id of [dry, live]) {
        checkDecimals(`GET ${id}`, await answer(`/v1/strategies/${id}`), rules, checked)
        for (const list of ['orders', 'trades']) {
          let cursor: string | null | undefined
          let rows = 0
          do {
            const page = await answer(`/v1/strategies/${id}/${list}?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
            checkDecimals(`GET ${id} ${list}`, page.data, rules, checked)
            rows += page.data!.length
            cursor = page.next_cursor
          } while (cursor)
          assert.ok(rows >= 2, `${id} has ${list}`)
        }
        const messages = streams.get(id)!.messages
        assert.ok(messages.some((m) => (m as { type: string }).type === 'position_closed'), `the stream of ${id} carried closes`)
        checkDecimals(`stream of ${id}`, messages, rules, checked)
      }
      const payloads = receiver.received.filter((r) => r.path.endsWith('/run')).map((r) => JSON.parse(r.body) as unknown)
      assert.ok(payloads.length >= 6, `${payloads.length} webhook payloads`)
      checkDecimals('webhooks', payloads, rules, checked)
      assert.deepEqual(checked.problems, [])
      // The walk saw the values it is about (a walk that found none would prove nothing).
      assert.ok(checked.prices >= 20 && checked.quantities >= 20 && checked.money >= 20, JSON.stringify({ ...checked, problems: undefined }))
      process.stdout.write(`# decimals checked: ${checked.prices} prices, ${checked.quantities} quantities, ${checked.money} money\n`)
    })
  })
}
