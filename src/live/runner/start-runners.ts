import type { EventEmitter } from 'node:events'
import type { FastifyBaseLogger } from 'fastify'
import type { SecretBox } from '../../auth/secret-box.js'
import type { Config } from '../../config.js'
import type { DatabaseHandle } from '../../db/connect.js'
import type { MarketData } from '../../market/market-data.js'
import { RunnerPool, type RunnerPoolOptions } from './runner-pool.js'

/** How often an embedded database's run tables are vacuumed (a server's autovacuum does it there). */
const EMBEDDED_VACUUM_MS = 15_000

/** Starts this process's strategy runners; the stream host is UPSTREAM_WS_URL, else UPSTREAM_URL as ws(s). `extra`: e.g. observe (bench/live.ts). */
export function startRunners(
  config: Config,
  database: DatabaseHandle,
  market: MarketData,
  log: FastifyBaseLogger,
  signals?: EventEmitter,
  secrets?: SecretBox,
  now?: () => number,
  extra: Partial<Pick<RunnerPoolOptions, 'observe'>> = {},
): RunnerPool | undefined {
  const wsUrl = config.upstreamWsUrl ?? config.upstreamUrl?.replace(/^http/, 'ws')
  if (!wsUrl) return undefined
  const vacuum = config.databaseUrl ? {} : { vacuumMs: EMBEDDED_VACUUM_MS, serialTransactions: true }
  const pool = new RunnerPool({ db: database.db, database, market, wsUrl, log, ...(signals ? { signals } : {}), ...(secrets ? { secrets } : {}), ...(now ? { now } : {}), ...vacuum, ...extra })
  pool.start()
  return pool
}
