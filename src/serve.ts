import type http from 'node:http'
import type net from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import { buildApp } from './app.js'
import type { Config } from './config.js'
import { controlSocketPath, serveControlSocket } from './control/control-socket.js'
import { operatorCommands } from './control/commands.js'
import { socketDirFor } from './db/pglite-host.js'
import { startBacktestWorkers } from './backtests/runner.js'
import { withUpstream } from './upstream.js'
import { startQueue } from './db/queue.js'
import { createServices } from './services.js'
import { startRunners } from './live/runner/start-runners.js'
import { openStorage, type Storage } from './storage.js'

export interface RunningServer {
  url: string
  /** Stops accepting, lets in-flight requests finish, stops the queue, closes the database. */
  stop(): Promise<void>
}

/** `perpetua serve`: the HTTP API with its queue, on the configured or embedded database (`opening`, when the caller started opening it). */
export async function serve(config: Config, logger: FastifyBaseLogger, opening: Promise<Storage> = openStorage(config, 'serve')): Promise<RunningServer> {
  const started = performance.now()
  const storage = await opening
  const cleanups: (() => Promise<unknown>)[] = [() => storage.close()]
  const cleanUp = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup()
  }
  let url: string
  try {
    const boss = await startQueue(storage.database, (error) => logger.error({ err: error }, 'queue error'))
    cleanups.push(() => boss.stop({ graceful: true, timeout: 10_000 }))
    const services = createServices(await withUpstream(config, logger, cleanups), storage.database, Date.now, boss)
    cleanups.push(() => services.market.close())
    cleanups.push(() => services.webhooks.close())
    await services.webhooks.start({ database: storage.database, log: logger })
    const workers = await startBacktestWorkers({ db: storage.database.db, boss, market: services.market, now: services.now, log: logger, workers: config.workers, signals: services.jobSignals })
    cleanups.push(() => workers.stop())
    const runners = startRunners(services.config, storage.database.db, services.market, logger, services.runSignals, services.secrets, services.now)
    if (runners) cleanups.push(() => runners.stop())
    if (storage.database.kind === 'embedded') {
      cleanups.push(await serveControlSocket(controlSocketPath(socketDirFor(config.dataDir)), operatorCommands(services)))
    }
    const app = await buildApp(services, { logger })
    const closeAfterResponse = trackResponses(app.server)
    cleanups.push(() => {
      closeAfterResponse()
      return app.close() // runs first: waits for in-flight requests
    })
    url = await app.listen({ port: config.port, host: config.host })
  } catch (error) {
    await cleanUp()
    throw error
  }
  logger.info(
    { url, database: storage.database.kind, migrations_applied: storage.migrationsApplied, startup_ms: Math.round(performance.now() - started) },
    'perpetua is serving',
  )

  let stopping: Promise<void> | undefined
  return {
    url,
    stop() {
      stopping ??= cleanUp()
      return stopping
    },
  }
}

/**
 * Fastify closes idle keep-alive connections once, when close() starts. A connection whose request
 * is still in flight then was answered "Connection: keep-alive" and stayed open, so close() waited
 * for the client or the 72 s keep-alive timeout (test/cli/serve-lifecycle.test.ts). The returned
 * function makes every response still in flight the last one on its connection.
 */
function trackResponses(server: http.Server): () => void {
  const inFlight = new Map<http.ServerResponse, net.Socket>()
  let closing = false
  server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
    if (closing) {
      // Fastify may have answered already (503 while closing), in the listener before this one.
      if (!response.headersSent) response.setHeader('connection', 'close')
      return
    }
    inFlight.set(response, request.socket)
    response.once('close', () => inFlight.delete(response))
  })
  return () => {
    closing = true
    for (const [response, socket] of inFlight) {
      if (!response.headersSent) response.setHeader('connection', 'close')
      else if (!response.writableFinished) response.once('finish', () => socket.end())
    }
  }
}
