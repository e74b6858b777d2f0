import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import fs from 'node:fs'
import type { Db } from '../../src/db/connect.js'
import { UpstreamClient } from '../../src/market/upstream-client.js'
import { BinanceTradingClient } from '../../src/trading/binance/trading-client.js'
import { parseSingleJsonLine, runCli, type ServerProcess, startServe } from '../cli/cli-process.js'
import { startReplay, type ReplayExchange } from '../support/app.js'
import { type Backend, openTestDatabase, type TestDatabase, tempDir } from '../support/database.js'
import type { Account } from './live-accounts.js'

/**
 * Perpetua as separate processes (`perpetua serve` children, run from source) around a replay exchange that
 * lives in the test process, so every Perpetua process can be SIGKILLed while the exchange goes on trading,
 * triggering and filling. PostgreSQL: `count` nodes on one fresh database (the test reads it too); the embedded
 * store: one node whose DATA_DIR is kept across restarts. Every call goes over HTTP with a Bearer app token.
 */
export interface PerpetuaNodes {
  backend: Backend
  replay: ReplayExchange
  /** The PostgreSQL database the nodes share (undefined on the embedded store, which its node holds). */
  db: Db | undefined
  /** The nodes running now (empty after killAll). */
  running(): ServerProcess[]
  /** Starts nodes (the first time, and again after killAll) and waits for each to answer /healthz. */
  start(count?: number): Promise<void>
  /** SIGKILL of every running node; resolves once each has exited. */
  killAll(): Promise<void>
  /** SIGKILL of one node. */
  kill(node: ServerProcess): Promise<void>
  /** SIGTERM of one node: resolves once it has exited, with 0 (asserted), and when the signal was sent (Unix ms). */
  terminate(node: ServerProcess): Promise<{ signalledAt: number }>
  /** Node k's DATA_DIR (the embedded store's database lives there). */
  dataDir(k: number): string
  /** The test user's Authorization header (once a node has started). */
  authorization(): string
  /** An API call on a running node as the test's user; the parsed JSON body (undefined for 204). */
  call(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<{ status: number; json: any; text: string }>
  /** The account's trading client on the replay exchange, as its holder sees it (signed with the wall clock). */
  exchange(a: Account): BinanceTradingClient
  /** The account's position on the symbol (positionRisk, weight 5). */
  exchangeQty(a: Account, symbol?: string): Promise<number>
  /** The replay exchange's time (it runs at the given speed). */
  exchangeNow(): Promise<number>
  close(): Promise<void>
}

export interface NodesOptions {
  replay: { speed: number; replayStart: number; accounts: (Account & { balances?: Record<string, string> })[] }
  /** How many nodes start by default (PostgreSQL only; the embedded store has one). */
  count?: number
}

export async function startPerpetuaNodes(backend: Backend, options: NodesOptions): Promise<PerpetuaNodes> {
  const replay = await startReplay({ ...options.replay })
  let database: TestDatabase | undefined
  const dataDirs: string[] = []
  const running: ServerProcess[] = []
  let token: string | undefined
  try {
    database = backend === 'postgres' ? await openTestDatabase('postgres', { poolMax: 2 }) : undefined
    // Every node opens the same sealed exchange keys and accepts the same app tokens.
    const shared = {
      MASTER_KEY: crypto.randomBytes(32).toString('base64'),
      APP_JWT_SECRET: crypto.randomBytes(32).toString('base64'),
      UPSTREAM_URL: replay.url,
      UPSTREAM_WS_URL: replay.wsUrl,
      WORKERS: '1',
      RATE_LIMIT_WEIGHT_PER_MINUTE: '100000',
      ...(database ? { DATABASE_URL: database.url! } : {}),
    }
    const dataDir = (k: number) => (dataDirs[k] ??= tempDir(`node${k}`))
    const envOf = (k: number) => ({ ...shared, DATA_DIR: dataDir(k) })
    // The test's own exchange reads leave from another loopback address: the replay exchange's per-IP weight of the
    // nodes under test is theirs alone (a test polling the books spent it, and the nodes then waited out a minute).
    const upstream = new UpstreamClient({ apiUrl: replay.url, dataUrl: replay.url, now: Date.now, localAddress: '127.0.0.2' })

    const nodes: PerpetuaNodes = {
      backend,
      replay,
      db: database?.handle.db,
      running: () => [...running],
      async start(count = backend === 'postgres' ? (options.count ?? 2) : 1) {
        assert.ok(backend === 'postgres' || count === 1, 'the embedded store has one node')
        const started = await Promise.all(Array.from({ length: count }, (_, k) => startServe(envOf(running.length + k))))
        running.push(...started)
        if (token === undefined) {
          const issued = await runCli(['tokens', 'issue', '--email', 'outage@example.test'], envOf(0))
          assert.equal(issued.code, 0, issued.stderr)
          token = (parseSingleJsonLine(issued.stdout) as { access_token: string }).access_token
        }
      },
      async killAll() {
        await Promise.all(running.map((node) => nodes.kill(node)))
      },
      async kill(node) {
        const exited = node.exited(30_000)
        node.child.kill('SIGKILL')
        const { signal } = await exited
        assert.equal(signal, 'SIGKILL')
        running.splice(running.indexOf(node), 1)
      },
      async terminate(node) {
        const exited = node.exited(60_000)
        const signalledAt = Date.now()
        node.child.kill('SIGTERM')
        const { code, signal } = await exited
        assert.deepEqual({ code, signal }, { code: 0, signal: null }, `a SIGTERMed node exits 0\n${node.stderr()}`)
        running.splice(running.indexOf(node), 1)
        return { signalledAt }
      },
      dataDir,
      authorization: () => `Bearer ${token}`,
      async call(method, path, body) {
        const node = running[0]
        assert.ok(node, 'no Perpetua node is running')
        const response = await fetch(`${node.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        })
        const text = await response.text()
        return { status: response.status, text, json: text ? JSON.parse(text) : undefined }
      },
      exchange: (a) => new BinanceTradingClient(upstream, { apiKey: a.apiKey, apiSecret: a.secretKey }, Date.now),
      async exchangeQty(a, symbol = 'BTCUSDT') {
        const answer = await nodes.exchange(a).positions(symbol)
        assert.equal(answer.kind, 'ok', JSON.stringify(answer))
        return answer.kind === 'ok' ? Number(answer.value[0]?.positionAmt ?? 0) : Number.NaN
      },
      async exchangeNow() {
        const response = await fetch(`${replay.url}/fapi/v1/time`)
        return ((await response.json()) as { serverTime: number }).serverTime
      },
      async close() {
        await nodes.killAll().catch(() => undefined)
        await upstream.close()
        await database?.close()
        await replay.close()
        for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true })
      },
    }
    return nodes
  } catch (error) {
    await database?.close()
    await replay.close()
    throw error
  }
}
