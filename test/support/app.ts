import type { FastifyBaseLogger, FastifyInstance, LightMyRequestResponse } from 'fastify'
import { pino } from 'pino'
import { buildApp } from '../../src/app.js'
import { ensureQueues } from '../../src/work/ensure-queues.js'
import { pollSecondsFor, startWork } from '../../src/work/start-work.js'
import { workHandlers } from '../../src/work-handlers.js'
import { startQueue } from '../../src/db/queue.js'
import { issueApiKey } from '../../src/auth/api-keys.js'
import type { Scope } from '../../src/auth/scopes.js'
import { type Config, loadConfig } from '../../src/config.js'
import type { startReplayExchange } from '../../src/replay-exchange/index.js'
import { createServices, type Services } from '../../src/services.js'
import { type Backend, openTestDatabase, type TestDatabase } from './database.js'
import { type KeyPair, signedHeaders } from './signing.js'

/**
 * A clock tests can move; every service of a test app reads time from it. A `wall` clock follows
 * real time (never going back, and still moved by advance()): for clients outside the test's
 * control, such as a browser that signs with its own clock or polls a job every few seconds.
 */
export class TestClock {
  constructor(
    public value = Date.now(),
    private readonly wall = false,
  ) {}
  now = (): number => (this.wall ? Math.max(Date.now(), this.value) : this.value)
  advance(ms: number): void {
    this.value = this.now() + ms
  }
}

export type ReplayExchange = Awaited<ReturnType<typeof startReplayExchange>>

export interface TestAppOptions {
  /** Start a replay exchange on a free port (with these options) and use it as UPSTREAM_URL. */
  replay?: Parameters<typeof startReplayExchange>[0] | true
  /** Start pg-boss on the test database (jobs can be created), and optionally the backtest and webhook workers. */
  queue?: 'queue' | 'workers'
  /** Engine threads of the backtest workers (default 1). */
  engineThreads?: number
  /** Run over this open database instead of a fresh one, and leave it open at close (a restart over the same data). */
  database?: TestDatabase
  /** Settings the environment does not carry (e.g. webhookTimeoutMs), over those loadConfig made. */
  config?: Partial<Config>
  /** The app's logger (e.g. one writing to memory, to scan the logs); default: none. */
  logger?: FastifyBaseLogger
  /** The app's clock follows real time (TestClock `wall`) instead of standing still between advances. */
  wallClock?: boolean
}

export interface TestApp {
  app: FastifyInstance
  services: Services
  database: TestDatabase
  clock: TestClock
  /** The replay exchange started for this app (option `replay`). */
  replay: ReplayExchange | undefined
  /** Creates a user (by email) and an API key with these scopes. */
  createKey(scopes: Scope[], email?: string): Promise<KeyPair>
  /** Sends a signed request through app.inject; a string or Buffer `body` is sent as the exact bytes given. */
  signed(key: KeyPair, method: string, url: string, body?: unknown, extraHeaders?: Record<string, string>): Promise<LightMyRequestResponse>
  close(): Promise<void>
}

let emails = 0
const silentLogger = pino({ level: 'silent' })

/** A replay exchange on a free loopback port; imported on demand so apps without one do not load it. */
export async function startReplay(options: Parameters<typeof startReplayExchange>[0] = {}): Promise<ReplayExchange> {
  const { startReplayExchange } = await import('../../src/replay-exchange/index.js')
  return startReplayExchange({ host: '127.0.0.1', port: 0, ...options })
}

/** The whole app over a fresh database of the given backend; env overrides go through loadConfig. */
export async function startTestApp(backend: Backend, env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const replay = options.replay ? await startReplay(options.replay === true ? {} : options.replay) : undefined
  const database = options.database ?? (await openTestDatabase(backend))
  const upstream = replay ? { UPSTREAM_URL: replay.url } : {}
  const config = { ...loadConfig({ DATA_DIR: database.dataDir, LOG_LEVEL: 'silent', ...upstream, ...env }), ...options.config }
  const clock = new TestClock(Date.now(), options.wallClock === true)
  const boss = options.queue ? await startQueue(database.handle, () => undefined) : undefined
  if (boss) await ensureQueues(boss, workHandlers())
  const services = createServices(config, database.handle, clock.now, boss)
  const workers =
    boss && options.queue === 'workers'
      ? await startWork(
          { db: database.handle.db, database: database.handle, boss, market: services.market, now: clock.now, log: silentLogger, workers: options.engineThreads ?? 1, historyCacheMb: config.historyCacheMb, pollSeconds: pollSecondsFor(database.handle.kind) },
          workHandlers(),
        )
      : undefined
  if (workers) await services.webhooks.start({ database: database.handle, log: silentLogger })
  // As `perpetua serve` does: with a PostgreSQL server, keys are cached while their changes are followed.
  const following = database.handle.kind === 'server' ? await services.keys.follow(database.handle, () => undefined) : undefined
  const app = await buildApp(services, options.logger ? { logger: options.logger } : {})
  await app.ready()
  return {
    app,
    services,
    database,
    clock,
    replay,
    createKey: (scopes, email = `user${++emails}-${process.pid}@example.test`) =>
      issueApiKey(database.handle.db, services.secrets, { email, scopes }),
    signed(key, method, url, body, extraHeaders = {}) {
      clock.advance(1) // a real client's clock moves between requests, so identical requests differ
      const payload = body === undefined ? '' : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body)
      return app.inject({
        method: method as 'GET',
        url,
        payload: payload.length === 0 ? undefined : payload,
        headers: {
          ...(payload.length === 0 ? {} : { 'content-type': 'application/json' }),
          ...signedHeaders(key, method, url, payload, clock.now()),
          ...extraHeaders,
        },
      })
    },
    async close() {
      await app.close()
      await following?.close()
      await workers?.stop()
      await services.webhooks.close()
      await services.sandbox.close()
      await boss?.stop({ graceful: false, timeout: 2000 })
      await services.market.close()
      await replay?.close()
      if (!options.database) await database.close()
    },
  }
}
