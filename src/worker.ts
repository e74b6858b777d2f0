import type { FastifyBaseLogger } from 'fastify'
import { startWork } from './work/start-work.js'
import { workHandlers } from './work-handlers.js'
import type { Config } from './config.js'
import { startQueue } from './db/queue.js'
import { createMarketData } from './market/market-data.js'
import { openStorage } from './storage.js'
import { startRunners } from './live/runner/start-runners.js'
import { withUpstream } from './upstream.js'
import { loadOrCreateKey } from './auth/local-keys.js'
import { SecretBox } from './auth/secret-box.js'
import { createWebhookPipeline } from './webhooks/pipeline.js'
import { trackDatabase } from './ops/database-gauges.js'
import { startMetricsListener } from './ops/metrics-listener.js'
import { DrainState, drainAndHandOver } from './ops/drain-state.js'
import { setDraining } from './ops/registry.js'

/**
 * `perpetua worker`: backtest workers and webhook deliveries without HTTP, for scale-out beside `serve` nodes on one
 * PostgreSQL server (DESIGN §1). The embedded database belongs to the one `serve` process, which runs
 * its own workers, so a worker process needs DATABASE_URL.
 */
export async function work(config: Config, logger: FastifyBaseLogger): Promise<{ metricsUrl: string | undefined; drain: DrainState; stop(): Promise<void> }> {
  if (!config.databaseUrl) {
    throw new Error('perpetua worker needs DATABASE_URL: the embedded database is owned by `perpetua serve`, which runs its own workers')
  }
  const storage = await openStorage(config, 'worker')
  const cleanups: (() => Promise<unknown>)[] = [() => storage.close()]
  // Runners and job workers stop first, side by side: their runs and jobs go to other nodes at once (serve.ts).
  const handOvers: (() => Promise<unknown>)[] = []
  const drain = new DrainState()
  drain.onChange(setDraining) // perpetua_draining and perpetua_ready follow it
  const cleanUp = async () => {
    await drainAndHandOver(drain, handOvers, logger)
    for (const cleanup of cleanups.reverse()) await cleanup()
  }
  let metricsUrl: string | undefined
  try {
    const untrack = trackDatabase(storage.database, Date.now, logger)
    cleanups.push(async () => untrack())
    const metricsListener = await startMetricsListener(config.metricsAddr, logger)
    cleanups.push(() => metricsListener.close())
    metricsUrl = metricsListener.url
    const boss = await startQueue(storage.database, (error) => logger.error({ err: error }, 'queue error'))
    cleanups.push(() => boss.stop({ graceful: true, timeout: 10_000 }))
    const upstreamConfig = await withUpstream(config, logger, cleanups)
    const market = createMarketData(upstreamConfig, Date.now)
    cleanups.push(() => market.close())
    const deps = { db: storage.database.db, database: storage.database, boss, market, now: Date.now, log: logger, workers: config.workers, historyCacheMb: config.historyCacheMb }
    const workers = await startWork(deps, workHandlers())
    handOvers.push(() => workers.stop())
    // Webhook secrets and exchange keys are sealed under MASTER_KEY: every node of one deployment must share it.
    const secrets = new SecretBox(loadOrCreateKey(config.masterKey, config.dataDir, 'master.key'))
    const runners = startRunners(upstreamConfig, storage.database, market, logger, undefined, secrets)
    if (runners) handOvers.push(() => runners.stop())
    const webhooks = createWebhookPipeline(config, storage.database.db, secrets, Date.now)
    cleanups.push(() => webhooks.close())
    await webhooks.start({ database: storage.database, log: logger })
    logger.info({ workers: config.workers }, 'perpetua worker is running backtests and webhook deliveries')
  } catch (error) {
    await cleanUp()
    throw error
  }
  let stopping: Promise<void> | undefined
  return { metricsUrl, drain, stop: () => (stopping ??= cleanUp()) }
}
