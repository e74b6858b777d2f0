import type { FastifyBaseLogger } from 'fastify'
import type { Config } from './config.js'

/**
 * Without UPSTREAM_URL the market data comes from the built-in replay exchange, started here on a
 * free loopback port and stopped after the app (DESIGN §2); so does the klines archive unless
 * UPSTREAM_ARCHIVE_URL says otherwise.
 */
export async function withUpstream(config: Config, logger: FastifyBaseLogger, cleanups: (() => Promise<unknown>)[]): Promise<Config> {
  if (config.upstreamUrl) return config
  const { startReplayExchange } = await import('./replay-exchange/index.js')
  const replay = await startReplayExchange({ host: '127.0.0.1', port: 0, ...(config.replayDataDir ? { dataDir: config.replayDataDir } : {}) })
  cleanups.push(() => replay.close())
  logger.info({ upstream: replay.url }, 'UPSTREAM_URL is not set: market data comes from the built-in replay exchange')
  return {
    ...config,
    upstreamUrl: replay.url,
    upstreamDataUrl: config.upstreamDataUrl ?? replay.url,
    upstreamWsUrl: config.upstreamWsUrl ?? replay.wsUrl,
    upstreamArchiveUrl: config.upstreamArchiveUrl ?? replay.url,
  }
}
