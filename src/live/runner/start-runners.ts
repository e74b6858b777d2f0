import type { EventEmitter } from 'node:events'
import type { FastifyBaseLogger } from 'fastify'
import type { SecretBox } from '../../auth/secret-box.js'
import type { Config } from '../../config.js'
import type { Db } from '../../db/connect.js'
import type { MarketData } from '../../market/market-data.js'
import { RunnerPool } from './runner-pool.js'

/** Starts this process's strategy runners; the stream host is UPSTREAM_WS_URL, else UPSTREAM_URL as ws(s). */
export function startRunners(config: Config, db: Db, market: MarketData, log: FastifyBaseLogger, signals?: EventEmitter, secrets?: SecretBox, now?: () => number): RunnerPool | undefined {
  const wsUrl = config.upstreamWsUrl ?? config.upstreamUrl?.replace(/^http/, 'ws')
  if (!wsUrl) return undefined
  const pool = new RunnerPool({ db, market, wsUrl, log, ...(signals ? { signals } : {}), ...(secrets ? { secrets } : {}), ...(now ? { now } : {}) })
  pool.start()
  return pool
}
