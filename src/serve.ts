import type http from 'node:http'
import type net from 'node:net'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { buildApp } from './app.js'
import type { Config } from './config.js'
import { controlSocketPath, serveControlSocket } from './control/control-socket.js'
import { operatorCommands } from './control/commands.js'
import { socketDirFor } from './db/pglite-host.js'
import { pollSecondsFor, startWork } from './work/start-work.js'
import { workHandlers } from './work-handlers.js'
import { withUpstream } from './upstream.js'
import { startQueue } from './db/queue.js'
import { createServices } from './services.js'
import { startRunners } from './live/runner/start-runners.js'
import { trackDatabase } from './ops/database-gauges.js'
import { startMetricsListener } from './ops/metrics-listener.js'
import { type DrainState, drainAndHandOver } from './ops/drain-state.js'
import { setDraining } from './ops/registry.js'
import { beginOpeningStorage, type OpeningStorage, type Storage } from './storage.js'

export interface RunningServer {
  url: string
  /** The metrics listener's http://host:port (METRICS_ADDR); undefined when off or its port was taken. */
  metricsUrl: string | undefined
  /**
   * Drains (/readyz 503 at once), hands its runs and jobs to other nodes, closes streams, stops accepting, lets
   * in-flight requests finish (up to SHUTDOWN_GRACE_MS), stops the queue, closes the database.
   */
  stop(): Promise<void>
}

/**
 * `perpetua serve`: the HTTP API with its queue, on the configured or embedded database (`opening`,
 * when the caller started opening it).
 */
export async function serve(config: Config, logger: FastifyBaseLogger, opening: OpeningStorage = beginOpeningStorage(config, 'serve')): Promise<RunningServer> {
  const started = performance.now()
  opening.opened.catch(() => undefined) // awaited below
  const cleanups: (() => Promise<unknown>)[] = [() => opening.close()]
  // What takes work (runners, job and sweep workers): stopped first, side by side, so runs and jobs are handed
  // to other nodes while this one still answers requests (and /readyz says it drains).
  const handOvers: (() => Promise<unknown>)[] = []
  let closeApp: (() => Promise<unknown>) | undefined
  let drain: DrainState | undefined
  let closeStreams: (() => void) | undefined
  const cleanUp = async () => {
    if (drain) await drainAndHandOver(drain, handOvers, logger)
    closeStreams?.()
    await closeApp?.() // then: waits for in-flight requests, up to SHUTDOWN_GRACE_MS
    for (const cleanup of cleanups.reverse()) await cleanup()
  }
  let url: string
  let metricsUrl: string | undefined
  let storage: Storage
  try {
    // The replay exchange, the services and the app are built while the embedded database opens in
    // its thread (0.3–0.7 s on a warm DATA_DIR); none of them queries it before it is open.
    const services = createServices(await withUpstream(config, logger, cleanups), opening.database, Date.now)
    drain = services.drain
    drain.onChange(setDraining) // perpetua_draining and perpetua_ready follow it
    closeStreams = () => services.strategyFeed.streams.closeAll()
    cleanups.push(() => services.market.close())
    cleanups.push(() => services.webhooks.close())
    cleanups.push(() => services.sandbox.close())
    const app = await buildApp(services, { logger })
    await app.ready() // plugins and routes make no queries: also while the database opens
    const closeAfterResponse = trackResponses(app.server)
    closeApp = () => {
      closeAfterResponse()
      return closeWithin(app, config.shutdownGraceMs, logger)
    }
    storage = await opening.opened
    const untrack = trackDatabase(storage.database, services.now, logger)
    cleanups.push(async () => untrack())
    const metricsListener = await startMetricsListener(config.metricsAddr, logger)
    cleanups.push(() => metricsListener.close())
    metricsUrl = metricsListener.url
    const boss = await startQueue(storage.database, (error) => logger.error({ err: error }, 'queue error'))
    cleanups.splice(1, 0, () => boss.stop({ graceful: true, timeout: 10_000 })) // stops after all that uses it, before the database
    services.boss = boss // routes read it per request; the queue needs the open database
    await services.webhooks.start({ database: storage.database, log: logger })
    const pollSeconds = pollSecondsFor(storage.database.kind)
    const deps = { db: storage.database.db, database: storage.database, boss, market: services.market, now: services.now, log: logger, workers: config.workers, historyCacheMb: config.historyCacheMb, pollSeconds }
    const workers = await startWork(deps, workHandlers())
    handOvers.push(() => workers.stop())
    const runners = startRunners(services.config, storage.database, services.market, logger, services.runSignals, services.secrets, services.now)
    if (runners) handOvers.push(() => runners.stop())
    if (storage.database.kind === 'embedded') {
      cleanups.push(await serveControlSocket(controlSocketPath(socketDirFor(config.dataDir)), operatorCommands(services)))
    }
    if (storage.database.kind === 'server') {
      const following = await services.keys.follow(storage.database, (error) => logger.error({ err: error }, 'API key change listener failed'))
      cleanups.push(() => following.close())
    }
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
    metricsUrl,
    stop() {
      stopping ??= cleanUp()
      return stopping
    },
  }
}

/**
 * Closes the app (its listener, then each connection once its response is out), giving requests in flight up
 * to `graceMs`; then ends the connections still open, so a client that never finishes its request cannot hold
 * the node (Kubernetes' terminationGracePeriodSeconds would SIGKILL it, runs and all, at 30 s).
 */
async function closeWithin(app: FastifyInstance, graceMs: number, logger: FastifyBaseLogger): Promise<void> {
  const closed = app.close()
  let timer: NodeJS.Timeout | undefined
  const late = await Promise.race([closed.then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), graceMs)))])
  clearTimeout(timer)
  if (!late) return
  logger.warn({ grace_ms: graceMs }, 'requests still in flight after SHUTDOWN_GRACE_MS: closing their connections')
  app.server.closeAllConnections()
  await closed
}

/**
 * Fastify closes idle keep-alive connections once, when close() starts. A connection whose request
 * is still in flight then was answered "Connection: keep-alive" and stayed open, so close() waited
 * for the client or the 72 s keep-alive timeout (test/cli/serve-lifecycle.test.ts). The returned
 * function makes every response still in flight the last one on its connection.
 * Tracked per connection, with each socket's latest response in a property: a Map entry and a
 * 'close' listener per request cost ~1.2 µs of /healthz (issue 13 profile).
 */
function trackResponses(server: http.Server): () => void {
  const sockets = new Set<TrackedSocket>()
  let closing = false
  server.on('connection', (socket: TrackedSocket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
    if (closing) {
      // Fastify may have answered already (503 while closing), in the listener before this one.
      if (!response.headersSent) response.setHeader('connection', 'close')
      return
    }
    ;(request.socket as TrackedSocket)[LATEST_RESPONSE] = response
  })
  return () => {
    closing = true
    for (const socket of sockets) {
      const response = socket[LATEST_RESPONSE]
      if (response === undefined || response.writableFinished) continue // idle: Fastify closes it
      if (!response.headersSent) response.setHeader('connection', 'close')
      else response.once('finish', () => socket.end())
    }
  }
}

const LATEST_RESPONSE = Symbol('latest response')
type TrackedSocket = net.Socket & { [LATEST_RESPONSE]?: http.ServerResponse }
