import { EventEmitter } from 'node:events'
import type { PgBoss } from 'pg-boss'
import { AppTokens } from './auth/app-token.js'
import { KeyDirectory } from './auth/key-directory.js'
import { loadOrCreateKey } from './auth/local-keys.js'
import { SecretBox } from './auth/secret-box.js'
import type { Config } from './config.js'
import type { StrategySandbox } from './custom-templates/sandbox/contract.js'
import { createStrategySandbox } from './custom-templates/sandbox/sandbox-service.js'
import { DrainState } from './ops/drain-state.js'
import { countRejections, type SandboxRejections } from './ops/work-metrics.js'
import type { DatabaseHandle } from './db/connect.js'
import { ReadCache } from './db/read-cache.js'
import { createMarketData, type MarketData } from './market/market-data.js'
import { StrategyFeed } from './live/stream/strategy-feed.js'
import type { StrategyRow } from './strategies/queries.js'
import { batchedStrategyReads, type StrategyReads } from './strategies/batched-reads.js'
import { MemorySharedState, PostgresSharedState, type SharedState } from './http/shared-state.js'
import { createWebhookPipeline, type WebhookPipeline } from './webhooks/pipeline.js'

/** The long-lived collaborators every role shares, built once from config and an open database. */
export interface Services {
  config: Config
  database: DatabaseHandle
  secrets: SecretBox
  tokens: AppTokens
  keys: KeyDirectory
  shared: SharedState
  /** Strategy reads, cached in embedded mode only (see strategies/service.ts). */
  strategyCache: ReadCache<StrategyRow | undefined> | undefined
  /** Strategy reads coalesced into shared statements, with a PostgreSQL server only. */
  strategyReads: StrategyReads | undefined
  /** The upstream exchange behind its cache (Redis when REDIS_URL is set); close() it on shutdown. */
  market: MarketData
  /** The job queue; absent in one-off CLI commands, which enqueue nothing. */
  boss: PgBoss | undefined
  /** Emits 'runs-changed' once a deploy or pause committed, so this process's runners react at once. */
  runSignals: EventEmitter
  /** Strategy stream messages (PostgreSQL NOTIFY) fanned out to this process's WebSocket clients; listens from the first client on. */
  strategyFeed: StrategyFeed
  /** Webhook deliveries: test deliveries on any node; start() runs the dispatcher and workers; close() it on shutdown. */
  webhooks: WebhookPipeline
  /** Runs users' strategy modules (custom templates) under the sandbox's limits; close() it on shutdown. */
  sandbox: StrategySandbox
  /** The sandbox's calls refused for their user's limit, for the operator's metrics (ops/work-metrics.ts). */
  sandboxRejections: SandboxRejections
  /** Turned on when this node begins to stop (SIGTERM): /readyz answers 503 from then on. */
  drain: DrainState
  now: () => number
}

export function createServices(config: Config, database: DatabaseHandle, now: () => number = Date.now, boss?: PgBoss): Services {
  const secrets = new SecretBox(loadOrCreateKey(config.masterKey, config.dataDir, 'master.key'))
  const tokens = new AppTokens(loadOrCreateKey(config.appJwtSecret, config.dataDir, 'app-jwt.key'), config.appJwtTtlSeconds)
  const embedded = database.kind === 'embedded'
  const sandboxRejections: SandboxRejections = { total: 0 }
  return {
    config,
    database,
    secrets,
    tokens,
    keys: new KeyDirectory(database.db, secrets, embedded ? 'local' : 'shared'),
    shared: embedded ? new MemorySharedState() : new PostgresSharedState(database.db, database.pool),
    strategyCache: embedded ? new ReadCache(5_000) : undefined,
    strategyReads: embedded ? undefined : batchedStrategyReads(database.pool),
    market: createMarketData(config, now),
    boss,
    runSignals: new EventEmitter(),
    strategyFeed: new StrategyFeed(database, () => undefined, now),
    webhooks: createWebhookPipeline(config, database.db, secrets, now),
    sandbox: countRejections(createStrategySandbox(config.sandboxThreads), sandboxRejections),
    sandboxRejections,
    drain: new DrainState(),
    now,
  }
}
