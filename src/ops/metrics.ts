import type { FastifyInstance } from 'fastify'
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client'

/** Prometheus metrics for one app instance: process defaults plus request counts and latencies by route. */
export function installMetrics(app: FastifyInstance): Registry {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const requests = new Counter({
    name: 'perpetua_http_requests_total',
    help: 'HTTP requests by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  })
  const duration = new Histogram({
    name: 'perpetua_http_request_duration_seconds',
    help: 'HTTP request latency by method and route pattern',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  })
  // prom-client hashes a label object on every inc/observe (~2 µs of /healthz, issue 13 profile); the
  // children of each method + route (+ status) are looked up once and kept. Routes and statuses are
  // bounded sets, so the maps are too.
  const routes = new Map<string, RouteMetrics>()
  const routeMetrics = (method: string, route: string): RouteMetrics => {
    const key = `${method} ${route}`
    let found = routes.get(key)
    if (!found) {
      const byStatus = new Map<number, Counter.Internal>()
      found = {
        duration: duration.labels(method, route),
        count(status) {
          let counter = byStatus.get(status)
          if (!counter) byStatus.set(status, (counter = requests.labels(method, route, String(status))))
          counter.inc()
        },
      }
      routes.set(key, found)
    }
    return found
  }
  // A callback hook: every request runs it, and an async one costs a promise per request.
  app.addHook('onResponse', (request, reply, done) => {
    // The route pattern, never the raw URL, keeps label cardinality bounded.
    const metrics = routeMetrics(request.method, request.routeOptions.url ?? 'unmatched')
    metrics.count(reply.statusCode)
    metrics.duration.observe(reply.elapsedTime / 1000)
    done()
  })
  return registry
}

interface RouteMetrics {
  duration: Histogram.Internal<'method' | 'route'>
  count(status: number): void
}
