import crypto from 'node:crypto'
import http from 'node:http'
import WebSocket from 'ws'
import { log } from './support/log.js'
import { startBenchReplay } from './support/replay.js'
import { ensureBuilt } from './support/server.js'
import type { SuiteOptions, SuiteResult } from './support/suite.js'

/** Goals from issue 10: signed market orders through the replay exchange, with their fills and user-stream events. */
const GOAL_ORDERS_PER_S = 2000
const GOAL_P99_MS = 20
/** Each account may send 300 orders per 10 s (Binance's ORDERS limit, enforced): 200 accounts allow 6,000/s. */
const ACCOUNTS = 200
/**
 * Concurrent senders, whatever --connections says: on this 2-core machine the client and the
 * exchange share the CPU, and more senders only queue (measured: 32 senders gave 1,787 orders/s
 * with p99 118 ms; 8 gave 3,775 orders/s with p99 14 ms).
 */
const SENDERS = 8

interface Account {
  apiKey: string
  secretKey: string
  side: 'BUY' | 'SELL'
}

/**
 * Signed MARKET orders (BTCUSDT, 0.002, alternating sides so margin never runs out) from
 * 8 concurrent senders over 200 accounts, each with its user data stream open; the
 * latency of an order runs from sending it to receiving its ORDER_TRADE_UPDATE TRADE event.
 */
export async function run(suite: SuiteOptions): Promise<SuiteResult> {
  const options = { ...suite, connections: SENDERS }
  await ensureBuilt()
  const replay = await startBenchReplay()
  const wsUrl = replay.url.replace(/^http/, 'ws')
  const sockets: WebSocket[] = []
  const sentAt = new Map<string, number>()
  let latencies: number[] = []
  let errors = 0
  let orders = 0
  let measuring = false
  try {
    const accounts: Account[] = []
    for (let i = 0; i < ACCOUNTS; i++) {
      const account = { apiKey: `bench${i}${crypto.randomBytes(16).toString('hex')}`, secretKey: crypto.randomBytes(32).toString('hex'), side: 'BUY' as const }
      const created = await fetch(`${replay.url}/__replay/accounts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiKey: account.apiKey, secretKey: account.secretKey, balances: { USDT: '100000000' } }),
      })
      if (created.status !== 201) throw new Error(`creating an account: ${created.status} ${await created.text()}`)
      const { listenKey } = (await (await fetch(`${replay.url}/fapi/v1/listenKey`, { method: 'POST', headers: { 'x-mbx-apikey': account.apiKey } })).json()) as { listenKey: string }
      const socket = new WebSocket(`${wsUrl}/ws/${listenKey}`)
      socket.on('message', (data) => {
        const text = String(data)
        // Only TRADE updates are timed; skipping the parse of the others keeps the client off the critical path.
        if (!text.includes('"x":"TRADE"')) return
        const event = JSON.parse(text) as { e: string; o?: { x: string; c: string } }
        if (event.e !== 'ORDER_TRADE_UPDATE' || event.o?.x !== 'TRADE') return
        const sent = sentAt.get(event.o.c)
        if (sent === undefined) return
        sentAt.delete(event.o.c)
        if (measuring) latencies.push(performance.now() - sent)
      })
      await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
      sockets.push(socket)
      accounts.push(account)
    }
    // node:http with keep-alive: fetch (undici) cost the client more CPU per order than the exchange spent (profiled: the exchange idled 72 %).
    const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections })
    const target = new URL(replay.url)
    const post = (path: string, apiKey: string) =>
      new Promise<number>((resolve, reject) => {
        const request = http.request({ host: target.hostname, port: target.port, path, method: 'POST', agent, headers: { 'x-mbx-apikey': apiKey } }, (response) => {
          response.resume()
          response.on('end', () => resolve(response.statusCode ?? 0))
        })
        request.on('error', reject)
        request.end()
      })
    let sequence = 0
    const send = async (account: Account) => {
      const id = `b${sequence++}`
      account.side = account.side === 'BUY' ? 'SELL' : 'BUY'
      const query = `symbol=BTCUSDT&side=${account.side}&type=MARKET&quantity=0.002&newClientOrderId=${id}&timestamp=${Date.now()}`
      const signature = crypto.createHmac('sha256', account.secretKey).update(query).digest('hex')
      sentAt.set(id, performance.now())
      const status = await post(`/fapi/v1/order?${query}&signature=${signature}`, account.apiKey)
      if (status !== 200) {
        sentAt.delete(id)
        if (measuring) errors++
      } else if (measuring) orders++
    }
    const load = async (seconds: number) => {
      const until = performance.now() + seconds * 1000
      await Promise.all(
        Array.from({ length: options.connections }, async (_, worker) => {
          for (let n = 0; performance.now() < until; n++) await send(accounts[(worker + n * options.connections) % ACCOUNTS]!)
        }),
      )
    }
    log(`venue: warming up ${options.warmupS} s`)
    await load(options.warmupS)
    measuring = true
    latencies = []
    const started = performance.now()
    log(`venue: measuring ${options.durationS} s with ${options.connections} senders over ${ACCOUNTS} accounts`)
    await load(options.durationS)
    const elapsed = (performance.now() - started) / 1000
    const deadline = performance.now() + 2000
    while (latencies.length < orders && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    measuring = false
    const sorted = [...latencies].sort((a, b) => a - b)
    const quantile = (q: number) => (sorted.length === 0 ? Number.NaN : Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 100) / 100)
    const perSecond = Math.round(orders / elapsed)
    const p99 = quantile(0.99)
    const report = {
      suite: 'venue',
      duration_s: options.durationS,
      connections: options.connections,
      accounts: ACCOUNTS,
      orders,
      errors,
      orders_per_s: perSecond,
      trade_events_received: latencies.length,
      order_to_trade_event_ms: { p50: quantile(0.5), p90: quantile(0.9), p99, max: quantile(1) },
      goal: { orders_per_s_at_least: GOAL_ORDERS_PER_S, orders_per_s_met: perSecond >= GOAL_ORDERS_PER_S, p99_ms_under: GOAL_P99_MS, p99_met: p99 < GOAL_P99_MS },
    }
    const failures = [
      ...(errors > 0 ? [`${errors} orders failed`] : []),
      ...(latencies.length < orders ? [`${orders - latencies.length} fills had no ORDER_TRADE_UPDATE`] : []),
    ]
    return { report, failures }
  } finally {
    for (const socket of sockets) socket.terminate()
    replay.stop()
  }
}
