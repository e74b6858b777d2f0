import type { FastifyInstance, FastifyReply, FastifyRequest, onResponseHookHandler } from 'fastify'
import type { Metric } from 'prom-client'
import { processRegistry } from './registry.js'
import { DURATION_BUCKETS, type RouteTally, RouteTallies } from './route-tallies.js'

const REQUESTS = 'perpetua_http_requests_total'
const DURATION = 'perpetua_http_request_duration_seconds'

export interface Metrics {
  /** Counts a request no route matched (a 404, or an error raised before routing) as route "unmatched". */
  recordUnmatched(request: FastifyRequest, reply: FastifyReply): void
}

/**
 * The process's request counts and latencies by route pattern (never the raw URL, so label cardinality stays
 * bounded), in the process registry (ops/registry.ts): apps built in one process (tests build many) add to one
 * tally per route. Each route gets its own onResponse hook holding its tally; a request no route matched has no
 * route hooks and is recorded by the not-found and framework-error handlers instead, as it is answered.
 */
export function installMetrics(app: FastifyInstance): Metrics {
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat()
    const only = methods.length === 1 ? tallies.for(methods[0]!, route.url) : undefined
    // A callback hook: an async one costs a promise per request.
    const record: onResponseHookHandler = (request, reply, done) => {
      ;(only ?? tallies.for(request.method, route.url)).record(reply.statusCode, reply.elapsedTime / 1000)
      done()
    }
    route.onResponse = [record, ...[route.onResponse ?? []].flat()]
  })
  return {
    recordUnmatched: (request, reply) => tallies.for(request.method, 'unmatched').record(reply.statusCode, reply.elapsedTime / 1000),
  }
}

/** A metric prom-client's registry renders: it asks get() at each scrape. */
function custom(name: string, help: string, type: 'counter' | 'histogram', values: () => object[]): Metric {
  return { name, help, type, get: () => ({ name, help, type, values: values(), aggregator: 'sum' }) } as unknown as Metric
}

const tallies = new RouteTallies()
processRegistry.registerMetric(requestsMetric(tallies))
processRegistry.registerMetric(durationMetric(tallies))

function requestsMetric(tallies: RouteTallies): Metric {
  return custom(REQUESTS, 'HTTP requests by method, route pattern and status', 'counter', () =>
    [...tallies.all()].flatMap((tally) =>
      [...tally.statuses].map(([status, value]) => ({ labels: { method: tally.method, route: tally.route, status: String(status) }, value })),
    ),
  )
}

function durationMetric(tallies: RouteTallies): Metric {
  return custom(DURATION, 'HTTP request latency by method and route pattern', 'histogram', () => [...tallies.all()].flatMap(histogramLines))
}

/** prom-client's histogram lines for one tally: cumulative buckets, +Inf, sum and count. */
function histogramLines(tally: RouteTally): object[] {
  const labels = { method: tally.method, route: tally.route }
  let cumulative = 0
  const buckets = [...DURATION_BUCKETS.map(String), '+Inf'].map((le, k) => {
    cumulative += tally.buckets[k]!
    return { labels: { ...labels, le }, value: cumulative, metricName: `${DURATION}_bucket` }
  })
  return [
    ...buckets,
    { labels, value: tally.sumSeconds, metricName: `${DURATION}_sum` },
    { labels, value: tally.count, metricName: `${DURATION}_count` },
  ]
}
