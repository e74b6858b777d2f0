import assert from 'node:assert/strict'
import fs from 'node:fs'
import { after, describe, it } from 'node:test'
import WebSocket from 'ws'
import { loadConfig } from '../../src/config.js'
import type { Db } from '../../src/db/connect.js'
import { createMarketData, type MarketData } from '../../src/market/market-data.js'
import { openStorage } from '../../src/storage.js'
import { killChildren, type ServerProcess } from '../cli/cli-process.js'
import { completeResponse, connect, readUntil } from '../cli/raw-http.js'
import { tempDir } from '../support/database.js'
import { poll } from '../support/poll.js'
import { assertBacktestParity, FAST_PARAMS } from './backtest-parity.js'
import { btcMinuteBacktest } from './btc-minute-backtest.js'
import { assertNoIdTwice, exchangeBook } from './exchange-books.js'
import { account, hex, LIVE_PARAMS, type LiveRunState, nothingPending } from './live-accounts.js'
import { assertLiveTrades } from './live-parity.js'
import { type PerpetuaNodes, startPerpetuaNodes } from './perpetua-nodes.js'

/**
 * The planned hand-over (issue 32): SIGTERM on the node holding a live and a dry run. The node drains (/readyz
 * 503 "draining" while it still listens), answers the request in flight, releases its leases, and the other node,
 * woken by the release, claims each run at once and carries on: no order twice, no bar lost or done twice (the
 * dry run's ledger is the backtest's, the live run's trades a backtest's and its orders the exchange's). Times are
 * the nodes' own log lines (the stopping node's release, the other's claim), not the test's sleeps.
 */
const MINUTE = 60_000
// A bar every 0.5 s: sma 3/8 trades within seconds of its warm-up (test/live/runner-takeover.test.ts).
const REPLAY = { speed: 120, replayStart: Date.UTC(2025, 5, 17, 6, 0, 0) }
/** How long the live run's order in flight at SIGTERM stays at the exchange before it executes. */
const HELD_MS = 800
const HAND_OVER_MS = 2_000

describe('SIGTERM hands runs over without a gap', () => {
  after(killChildren)

  it('postgres, two nodes: the node holding a live and a dry run drains; the other claims each within 2 s of its release and carries on', { skip: !process.env.TEST_DATABASE_URL }, async () => {
    const trader = account('HANDOVER')
    const nodes = await startPerpetuaNodes('postgres', { replay: { ...REPLAY, accounts: [{ ...trader, balances: { USDT: '10000' } }] }, count: 1 })
    const market = replayMarket(nodes)
    try {
      await nodes.start(1)
      const key = await nodes.call('POST', '/v1/exchange-keys', { api_key: trader.apiKey, api_secret: trader.secretKey, label: 'handover' })
      assert.equal(key.status, 200, key.text)
      const live = await deploy(nodes, 'live', { leverage: 2 }, { dry_run: false, exchange_key_id: key.json.id })
      const dry = await deploy(nodes, 'dry', { leverage: 1 }, { dry_run: true })
      const db = nodes.db!
      const ownerOf = async (id: string) => (await db.selectFrom('strategy_runs').select('lease_owner').where('strategy_id', '=', id).executeTakeFirstOrThrow()).lease_owner
      // The first node alone claims both (the deploy wakes it); the second starts after.
      const [holder] = nodes.running()
      const holderOwner = await poll('the first node to claim both runs', 30_000, async () => {
        const owners = [await ownerOf(live), await ownerOf(dry)]
        return owners[0] !== null && owners[0] === owners[1] ? owners[0] : undefined
      })
      assert.ok(holderOwner.startsWith(`${holder!.child.pid}-`))
      await nodes.start(1)
      const survivor = nodes.running().find((node) => node !== holder)!
      await poll('both runs to hold a position, nothing of the live run pending', 90_000, async () => {
        const [l, d] = [await stateOf(db, live), await stateOf(db, dry)]
        return l && nothingPending(l) && l.broker.ledger.arrays.qty[0] !== 0 && d && d.broker.ledger.arrays.qty[0] !== 0 ? true : undefined
      }, 100)

      // A request in flight on the holder: headers parsed ("100 Continue"), half its body sent.
      const body = JSON.stringify({ name: 'in-flight', author: 'slow client' })
      const socket = await connect(holder!.port)
      try {
        socket.write(`POST /strategies HTTP/1.1\r\nHost: 127.0.0.1:${holder!.port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n`)
        assert.match(await readUntil(socket, (text) => text.includes('\r\n\r\n')), /^HTTP\/1\.1 100 Continue\r\n/)
        socket.write(body.slice(0, 10))

        // The live run's next order is held at the exchange for HELD_MS: the holder is stopped while it waits.
        nodes.replay.faults.add({ path: new RegExp(`newClientOrderId=pp-${hex(live)}-`), executeLate: true, latencyMs: HELD_MS, times: 1 })
        await poll('a live order in flight', 120_000, () => (nodes.replay.faults.active().length === 0 ? true : undefined), 10)
        const atSignal = { live: (await stateOf(db, live))!, dry: (await stateOf(db, dry))! }
        const inFlight = atSignal.live.pendingOrder
        assert.ok(inFlight, 'the intent was committed before its order went out')
        const stopped = nodes.terminate(holder!)

        // /readyz: 503 "draining" from the signal until the listener closes (the live run's step holds it open).
        const answers = await readinessUntilClosed(holder!)
        assert.ok(answers.some((a) => a.status === 503 && a.reasons.includes('draining')), `/readyz said draining: ${JSON.stringify(answers)}`)
        const firstDraining = answers.findIndex((a) => a.status === 503)
        assert.ok(answers.slice(firstDraining).every((a) => a.status === 503), `never ready again once draining: ${JSON.stringify(answers)}`)

        socket.write(body.slice(10))
        const response = await readUntil(socket, completeResponse)
        assert.match(response, /^HTTP\/1\.1 200 /, 'the request in flight is answered')
        assert.equal((JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as { name: string }).name, 'in-flight')
        const { signalledAt } = await stopped

        // Each run: released by the holder, claimed by the survivor (their log lines), within HAND_OVER_MS.
        const released = logTimes(holder!.stdout(), 'released run leases to the other nodes')
        const claimed = await poll('the survivor to log its claim of both runs', 15_000, () => {
          const times = logTimes(survivor.stdout(), 'claimed runs')
          return times.has(live) && times.has(dry) ? times : undefined
        })
        const handOver: Record<string, { fromSignal: number; fromRelease: number }> = {}
        for (const [name, id] of Object.entries({ live, dry })) {
          const releasedAt = released.get(id)
          const claimedAt = claimed.get(id)
          assert.ok(releasedAt !== undefined && claimedAt !== undefined, `${name}: released (${releasedAt}) and claimed (${claimedAt})\n${holder!.stdout()}`)
          handOver[name] = { fromSignal: claimedAt - signalledAt, fromRelease: claimedAt - releasedAt }
          assert.ok(claimedAt - releasedAt < HAND_OVER_MS, `${name}: claimed ${claimedAt - releasedAt} ms after its release`)
        }
        // The dry run was idle: released at once. The live run once its order's answer was in (HELD_MS).
        assert.ok(handOver.dry!.fromSignal < HAND_OVER_MS, `dry: claimed ${handOver.dry!.fromSignal} ms after SIGTERM`)
        assert.ok(handOver.live!.fromSignal < HELD_MS + HAND_OVER_MS, `live: claimed ${handOver.live!.fromSignal} ms after SIGTERM`)
        const survivorOwner = (await ownerOf(dry))!
        assert.ok(survivorOwner.startsWith(`${survivor.child.pid}-`))

        // Both carry on under the survivor: the same runs (no new warm-up), five more bars each.
        for (const [name, id] of Object.entries({ live, dry })) {
          await poll(`${name}: five more bars under the survivor`, 60_000, async () => {
            const s = await stateOf(db, id)
            return (await ownerOf(id)) === survivorOwner && s && s.broker.lastOpenTime! >= atSignal[name as 'live' | 'dry'].broker.lastOpenTime! + 5 * MINUTE ? true : undefined
          }, 100)
          assert.equal((await stateOf(db, id))!.warmupFrom, atSignal[name as 'live' | 'dry'].warmupFrom, `${name}: the same run, not a new warm-up`)
        }
        const finalDry = await assertBacktestParity({ database: { handle: { db } }, services: { market } }, dry, { params: FAST_PARAMS, capital: 1000, leverage: 1 })
        assert.ok(finalDry.broker.lastOpenTime! > atSignal.dry.broker.lastOpenTime!)

        // The live run: every exchange order is one booked fill (the held one too, once), positions agree, and its
        // trades are a backtest's over the same bars.
        const quiet = await quietLive(nodes, db, trader, live)
        assertNoIdTwice('live', quiet.book)
        const sent = quiet.book.orders.map((o) => o.clientOrderId).filter((c) => c.startsWith('pp-')).sort()
        assert.deepEqual(sent, quiet.booked, 'exactly one exchange order per filled intent')
        assert.equal(sent.filter((c) => c === inFlight).length, 1, 'the order in flight at SIGTERM went out once')
        assert.equal(quiet.book.position, quiet.ledgerQty, 'the exchange holds what the ledger holds')
        const trades = await db.selectFrom('strategy_trades').selectAll().where('strategy_id', '=', live).orderBy('id').execute()
        // Through the last exit: a bar's order fills after the bar (at the next one's open in the backtest).
        const end = Math.max(quiet.state.broker.lastOpenTime!, ...trades.map((trade) => trade.exit_time.getTime()))
        const expected = await btcMinuteBacktest(market, { params: LIVE_PARAMS, capital: 1000, leverage: 2, start: quiet.state.warmupFrom, end })
        assertLiveTrades('live', trades, expected.trades)
        process.stdout.write(`# SIGTERM hand-over (postgres): dry run claimed ${handOver.dry!.fromSignal} ms after the signal (${handOver.dry!.fromRelease} ms after its release); live run with an order held ${HELD_MS} ms: ${handOver.live!.fromSignal} ms (${handOver.live!.fromRelease} ms after its release); /readyz answers while draining: ${answers.length}\n`)
      } finally {
        socket.destroy()
      }
    } finally {
      await market.close()
      await nodes.close()
    }
  })

  it('embedded: SIGTERM, start again: the dry run resumes where it stopped, nothing lost', async () => {
    const nodes = await startPerpetuaNodes('pglite', { replay: { ...REPLAY, accounts: [] } })
    const market = replayMarket(nodes)
    try {
      await nodes.start()
      const one = await deploy(nodes, 'dry', { leverage: 1 }, { dry_run: true })
      const many = await deploy(nodes, 'momentum', { leverage: 1, ...MOMENTUM }, { dry_run: true })
      const ids = [one, many]
      const strategy = async (id: string) => {
        const s = (await nodes.call('GET', `/v1/strategies/${id}`)).json as { status: string; last_bar_at: string | null; stats: { open_positions: number } }
        assert.equal(s.status, 'deployed', JSON.stringify(s))
        return s
      }
      await poll('both dry runs to hold a position', 90_000, async () => ((await Promise.all(ids.map(strategy))).every((s) => s.stats.open_positions > 0) ? true : undefined), 200)
      // A status stream open on the node: it ends with the reconnect code, not a dropped connection.
      const [node] = nodes.running()
      const stream = new WebSocket(`${node!.url.replace(/^http/, 'ws')}/v1/strategies/${one}/stream`, { headers: { authorization: nodes.authorization() } })
      const closed = new Promise<{ code: number; reason: string }>((resolve) => stream.once('close', (code, reason) => resolve({ code, reason: reason.toString() })))
      await new Promise((resolve, reject) => {
        stream.once('message', resolve)
        stream.once('error', reject)
      })
      await nodes.terminate(node!)
      assert.deepEqual(await closed, { code: 1012, reason: 'server restarting: reconnect' })
      const released = logTimes(node!.stdout(), 'released run leases to the other nodes')
      assert.deepEqual(ids.filter((id) => !released.has(id)), [], 'every lease released at the stop, not left to expire')
      const stoppedAt = await withStore(nodes, async (db) => {
        const rows = await db.selectFrom('strategy_runs').select(['strategy_id', 'last_bar_at', 'lease_owner']).where('strategy_id', 'in', ids).execute()
        assert.deepEqual(rows.map((r) => r.lease_owner), [null, null])
        return new Map(rows.map((r) => [r.strategy_id, r.last_bar_at!.getTime()]))
      })

      await nodes.start()
      await poll('each run to act on five bars after the restart', 60_000, async () => {
        const at = await Promise.all(ids.map(async (id) => (await strategy(id)).last_bar_at))
        return at.every((a, k) => a && Date.parse(a) >= stoppedAt.get(ids[k]!)! + 5 * MINUTE) ? true : undefined
      }, 200)
      await nodes.terminate(nodes.running()[0]!)
      await withStore(nodes, async (db) => {
        const runs = await db.selectFrom('strategy_runs').select(['strategy_id', 'run', 'lease_owner']).where('strategy_id', 'in', ids).orderBy('strategy_id').execute()
        assert.deepEqual(runs.map((r) => [r.run, r.lease_owner]), [[1, null], [1, null]], 'one run each throughout, released at each stop')
        const source = { database: { handle: { db } }, services: { market } }
        await assertBacktestParity(source, one, { params: FAST_PARAMS, capital: 1000, leverage: 1 })
        await assertBacktestParity(source, many, { templateId: 'cross_sectional_momentum', params: MOMENTUM.params, capital: 3000, leverage: 1, symbols: MOMENTUM.symbols })
      })
    } finally {
      await market.close()
      await nodes.close()
    }
  })
})

/** The replay's market data as the runs read it: the backtests' rules and bars come from it. */
function replayMarket(nodes: PerpetuaNodes): MarketData {
  const dataDir = tempDir('handover-market')
  after(() => fs.rmSync(dataDir, { recursive: true, force: true }))
  return createMarketData(loadConfig({ UPSTREAM_URL: nodes.replay.url, DATA_DIR: dataDir }), Date.now)
}

/** A two-symbol dry run (test/live/runner-takeover.test.ts's). */
const MOMENTUM = { template_id: 'cross_sectional_momentum', params: { lookback: 5, rebalance_every: 3, long_count: 1, short_count: 1 }, symbols: ['BTCUSDT', 'ETHUSDT'], capital: '3000' }

/** Creates a strategy (sma_cross 3/8 on BTCUSDT 1m unless `fields` say otherwise; capital 1000) and deploys it; its id. */
async function deploy(nodes: PerpetuaNodes, name: string, fields: { leverage: number } & Partial<typeof MOMENTUM>, how: Record<string, unknown>): Promise<string> {
  const created = await nodes.call('POST', '/v1/strategies', { name, template_id: 'sma_cross', params: FAST_PARAMS, symbols: ['BTCUSDT'], timeframe: '1m', capital: '1000', ...fields })
  assert.equal(created.status, 200, created.text)
  const deployed = await nodes.call('POST', `/v1/strategies/${created.json.id}/deploy`, how)
  assert.equal(deployed.status, 200, deployed.text)
  return created.json.id as string
}

async function stateOf(db: Db, id: string): Promise<LiveRunState | undefined> {
  return (await db.selectFrom('strategy_runs').select('state').where('strategy_id', '=', id).executeTakeFirst())?.state as LiveRunState | undefined
}

/** The embedded store of a stopped node, opened here (its DATA_DIR's lock is free once it exited). */
async function withStore<T>(nodes: PerpetuaNodes, use: (db: Db) => Promise<T>): Promise<T> {
  const storage = await openStorage(loadConfig({ DATA_DIR: nodes.dataDir(0), LOG_LEVEL: 'silent' }), 'test')
  try {
    return await use(storage.database.db)
  } finally {
    await storage.close()
  }
}

/** /readyz of a stopping node, asked every 10 ms until its listener refuses: each answer's status and reasons. */
async function readinessUntilClosed(node: ServerProcess): Promise<{ status: number; reasons: string[] }[]> {
  const answers: { status: number; reasons: string[] }[] = []
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    const response = await fetch(`${node.url}/readyz`).catch(() => undefined)
    if (!response) return answers
    answers.push({ status: response.status, reasons: ((await response.json()) as { reasons?: string[] }).reasons ?? [] })
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error(`the stopping node still listened after 30 s: ${JSON.stringify(answers.slice(-3))}`)
}

/** Unix ms of the first log line with message `msg` naming each strategy id (pino's JSON lines). */
function logTimes(stdout: string, msg: string): Map<string, number> {
  const times = new Map<string, number>()
  for (const line of stdout.split('\n')) {
    if (!line.includes(msg)) continue
    const entry = JSON.parse(line) as { msg: string; time: number; strategy_ids?: string[] }
    if (entry.msg !== msg) continue
    for (const id of entry.strategy_ids ?? []) if (!times.has(id)) times.set(id, entry.time)
  }
  return times
}

/** The account's book, the run's booked fills and its state, read between two equal reads of the state with nothing pending. */
function quietLive(nodes: PerpetuaNodes, db: Db, trader: { apiKey: string; secretKey: string }, id: string) {
  return poll('a quiet moment to compare the exchange with the ledger', 30_000, async () => {
    const before = await stateOf(db, id)
    const book = await exchangeBook(nodes, trader)
    const booked = (await db.selectFrom('strategy_orders').select(['client_order_id', 'qty']).where('strategy_id', '=', id).where('status', '=', 'filled').execute())
      .filter((o) => Number(o.qty) > 0)
      .map((o) => o.client_order_id)
      .sort()
    const after = await stateOf(db, id)
    if (!before || !nothingPending(before) || JSON.stringify(before) !== JSON.stringify(after)) return undefined
    return { book, booked, state: after!, ledgerQty: after!.broker.ledger.arrays.qty[0]! }
  }, 200)
}
