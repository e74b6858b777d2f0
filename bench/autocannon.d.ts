// autocannon 8 ships no types; this declares the part of its programmatic API the benches use
// (README "API" and "Client API" sections).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events'

  namespace autocannon {
    interface RequestParams {
      method?: string
      path?: string
      headers?: Record<string, string>
      body?: string | Buffer
    }

    interface Request extends RequestParams {
      /** Called before every send of this request; returns the request to send (a falsy value restarts the list). */
      setupRequest?: (request: RequestParams, context: Record<string, unknown>) => RequestParams | null | undefined
      onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string>) => void
    }

    /** One connection; setupClient receives it before its first request is sent. */
    interface Client extends EventEmitter {
      setHeaders(headers: Record<string, string> | undefined): void
      setRequests(requests: Request[]): void
    }

    interface Options extends RequestParams {
      url: string
      connections?: number
      duration?: number
      amount?: number
      pipelining?: number
      timeout?: number
      workers?: number
      requests?: Request[]
      setupClient?: (client: Client) => void
      title?: string
    }

    interface Histogram {
      min: number
      max: number
      average: number
      mean: number
      stddev: number
      total: number
      p50: number
      p90: number
      p99: number
      p99_9: number
    }

    interface Result {
      title?: string
      url: string
      duration: number
      connections: number
      requests: Histogram
      latency: Histogram
      throughput: Histogram
      errors: number
      timeouts: number
      mismatches: number
      non2xx: number
      resets: number
      '1xx': number
      '2xx': number
      '3xx': number
      '4xx': number
      '5xx': number
      statusCodeStats: Record<string, { count: number }>
    }

    interface Instance extends EventEmitter, PromiseLike<Result> {
      stop(): void
    }
  }

  function autocannon(options: autocannon.Options): autocannon.Instance
  export default autocannon
}
