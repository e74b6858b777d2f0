import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../config.js'
import { processRegistry } from './registry.js'

export interface MetricsListener {
  /** http://host:port of the listener; undefined when it is off or could not listen. */
  url: string | undefined
  close(): Promise<void>
}

/**
 * The metrics listener (METRICS_ADDR): GET /metrics renders this process's registry, nothing else is served.
 * Off the API port, so /metrics is not public by default (issue 32): it binds to loopback unless told
 * otherwise and asks for no token. A port already taken is logged and the node goes on without it: a
 * node never fails for its metrics (two nodes on one host, a second worker, a stale process).
 */
export async function startMetricsListener(address: Config['metricsAddr'], log: FastifyBaseLogger): Promise<MetricsListener> {
  if (address === 'off') return { url: undefined, close: async () => undefined }
  const server = http.createServer((request, response) => {
    const path = request.url?.split('?')[0]
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n')
      return
    }
    processRegistry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': processRegistry.contentType }).end(request.method === 'HEAD' ? undefined : text),
      (error: unknown) => {
        log.error({ err: error }, 'metrics: the scrape failed')
        response.writeHead(500, { 'content-type': 'text/plain' }).end('internal error\n')
      },
    )
  })
  server.keepAliveTimeout = 65_000 // longer than Prometheus' scrape interval: one connection per scraper
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(address.port, address.host, () => {
        server.off('error', reject)
        resolve()
      })
    })
  } catch (error) {
    log.error({ err: error, metrics_addr: `${address.host}:${address.port}` }, 'metrics: the listener could not start; this node serves without it')
    return { url: undefined, close: async () => undefined }
  }
  const bound = server.address() as AddressInfo
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address
  const url = `http://${host}:${bound.port}`
  log.info({ metrics_url: `${url}/metrics` }, 'metrics listener is serving')
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
