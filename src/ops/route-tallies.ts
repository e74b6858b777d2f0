/** Latency buckets of perpetua_http_request_duration_seconds, in seconds. */
export const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10] as const

/**
 * One route's request counts by status and its latency histogram, as plain numbers: recording a
 * request is a few increments. prom-client's Counter.inc and Histogram.observe with label objects
 * validated and hashed the labels on every request, and finding the route pattern through
 * request.routeOptions built a 12-field object each time (issue 13: the metrics hook was the largest
 * share of our cost on GET /healthz).
 */
export class RouteTally {
  /** Requests by status code. */
  readonly statuses = new Map<number, number>()
  /** Requests per bucket, not cumulative: index k counts durations in (bucket k−1, bucket k]; the last slot is +Inf. */
  readonly buckets = new Float64Array(DURATION_BUCKETS.length + 1)
  count = 0
  sumSeconds = 0

  constructor(
    readonly method: string,
    readonly route: string,
  ) {}

  record(status: number, seconds: number): void {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1)
    let k = 0
    while (k < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[k]!) k++
    this.buckets[k]!++
    this.count++
    this.sumSeconds += seconds
  }
}

/** Every route's tally, by method and route pattern, made on first use. */
export class RouteTallies {
  private readonly byKey = new Map<string, RouteTally>()

  for(method: string, route: string): RouteTally {
    const key = `${method} ${route}`
    let tally = this.byKey.get(key)
    if (!tally) this.byKey.set(key, (tally = new RouteTally(method, route)))
    return tally
  }

  all(): IterableIterator<RouteTally> {
    return this.byKey.values()
  }
}
