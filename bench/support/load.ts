import fs from 'node:fs'
import autocannon from 'autocannon'
import { log } from './log.js'
import type { RequestSigner } from './signing.js'

export interface LoadTarget {
  /** Base URL of the server, e.g. http://127.0.0.1:8123 */
  url: string
  method?: string
  /** Path with query, exactly as sent (and signed). */
  path: string
  /** When given, every request is signed afresh; connection i signs with signers[i % length]. */
  signers?: RequestSigner[]
  /** The serving process, to report its CPU time per request (all its threads, user + system). */
  pid?: number
}

export interface LoadOptions {
  durationS: number
  connections: number
  warmupS: number
  /**
   * Requests per second over all connections (autocannon's overallRate), when set: the same traffic for a
   * route and its ceiling. Without it each side is driven as fast as it answers, and the slower one pays
   * for waking an idle client at every answer (its writev took 32 µs a response against 22 µs on the
   * faster /healthz, the same syscall with the same bytes; issue 36).
   */
  rate?: number
}

/** The numbers a suite reports for one target. */
export interface LoadSummary {
  req_per_s: number
  p50_ms: number
  p99_ms: number
  requests: number
  non2xx: number
  /** Connection errors plus timeouts. */
  errors: number
  status_codes: Record<string, number>
  /**
   * The server's CPU time per completed request (when its pid is known): steadier than throughput on a
   * shared host, where other work takes CPU from server and client alike.
   */
  server_cpu_us_per_req?: number
  /**
   * That CPU by thread: `main` (the event loop), and the others by their name (libuv's pool, V8's helpers
   * for GC and compiling, worker threads); what a request costs beyond the event loop shows here.
   */
  server_cpu_us_per_req_by_thread?: Record<string, number>
  /**
   * The load generator's own CPU time per request (this process: autocannon, and the signing of each
   * request). Client and server share the host's cores, so a costlier client lowers the rate too.
   */
  client_cpu_us_per_req?: number
}

/** A measured run plus the monotonic-clock window it covered (to cut a server CPU profile to it). */
export interface LoadRun {
  summary: LoadSummary
  /** process.hrtime in µs, the clock V8's profiler stamps samples with on Linux. */
  window: { startUs: number; endUs: number }
}

/** An optional warm-up (not reported), then `durationS` of load on `target` with `connections` connections. */
export async function runLoad(title: string, target: LoadTarget, options: LoadOptions): Promise<LoadRun> {
  if (options.warmupS > 0) {
    log(`${title}: warm-up ${options.warmupS} s`)
    await fire(title, target, options.connections, options.warmupS, options.rate)
  }
  const rate = options.rate ? ` at ${options.rate} req/s` : ''
  log(`${title}: ${options.durationS} s, ${options.connections} connections${rate}, ${target.method ?? 'GET'} ${target.path}`)
  const cpuBefore = target.pid === undefined ? undefined : cpuMicros(target.pid)
  const threadsBefore = target.pid === undefined ? undefined : threadCpuMicros(target.pid)
  const clientBefore = process.cpuUsage()
  const startUs = monotonicUs()
  const result = await fire(title, target, options.connections, options.durationS, options.rate)
  const endUs = monotonicUs()
  const client = process.cpuUsage(clientBefore)
  const summary = summarise(result)
  if (cpuBefore !== undefined && summary.requests > 0) {
    summary.server_cpu_us_per_req = Math.round((cpuMicros(target.pid!) - cpuBefore) / summary.requests)
    const threadsAfter = threadCpuMicros(target.pid!)
    summary.server_cpu_us_per_req_by_thread = Object.fromEntries(
      [...threadsAfter]
        .map(([name, us]) => [name, Math.round(((us - (threadsBefore!.get(name) ?? 0)) / summary.requests) * 10) / 10] as const)
        .filter(([, us]) => us > 0)
        .sort((a, b) => b[1] - a[1]),
    )
  }
  if (summary.requests > 0) summary.client_cpu_us_per_req = Math.round((client.user + client.system) / summary.requests)
  const cpu =
    (summary.server_cpu_us_per_req === undefined ? '' : `, server CPU ${summary.server_cpu_us_per_req} µs/req`) +
    (summary.client_cpu_us_per_req === undefined ? '' : `, client CPU ${summary.client_cpu_us_per_req} µs/req`)
  log(`${title}: ${summary.req_per_s} req/s, p99 ${summary.p99_ms} ms, non-2xx ${summary.non2xx}, errors ${summary.errors}${cpu}`)
  return { summary, window: { startUs, endUs } }
}

async function fire(title: string, target: LoadTarget, connections: number, durationS: number, rate: number | undefined): Promise<autocannon.Result> {
  const method = target.method ?? 'GET'
  const signers = target.signers
  let clients = 0
  return autocannon({
    title,
    url: `${target.url}${target.path}`,
    method,
    connections,
    duration: durationS,
    ...(rate ? { overallRate: rate } : {}),
    // autocannon builds each connection's requests from one shared definition and resets the
    // per-request `context` after every request, so per-connection state (key, last timestamp)
    // lives in a closure installed on each connection as it is created.
    ...(signers && signers.length > 0
      ? {
          setupClient(client: autocannon.Client) {
            signEachRequest(client, signers[clients++ % signers.length]!, method, target.path)
          },
        }
      : {}),
  })
}

/**
 * Makes `client` send every request signed afresh by `signer`. A request with a setupRequest goes
 * through autocannon's generic builder each time (object spreads, a deep clone of the context, the
 * header loop): 43-60 µs of client CPU per signed GET against 15-19 µs per bare Fastify request, on
 * the same two cores as the server, which cut the measured rate as much as the server's own work.
 * The first request is built by autocannon; each next one is that request's text with the fresh
 * timestamp and signature in place (autocannon 8.0.0 reads `requestIterator.currentRequest
 * .requestBuffer` after `nextRequest()`). The server gets the same bytes either way: checked below.
 */
function signEachRequest(client: autocannon.Client, signer: RequestSigner, method: string, path: string): void {
  let first: Record<string, string> | undefined
  client.setRequests([{ method, path, setupRequest: (request) => ({ ...request, headers: { ...request.headers, ...(first = signer.headers(method, path)) } }) }])
  const iterator = (client as unknown as { requestIterator: { currentRequest: { requestBuffer: Buffer }; nextRequest(): unknown } }).requestIterator
  const built = iterator.currentRequest.requestBuffer.toString('latin1')
  const head = built.slice(0, built.indexOf('\r\n', built.indexOf('Connection: keep-alive')) + 2)
  const text = (headers: Record<string, string>) => `${head}${Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n`
  if (!first || text(first) !== built) throw new Error('autocannon built a signed request other than the bench expects: update signEachRequest')
  iterator.nextRequest = function nextSigned() {
    this.currentRequest.requestBuffer = Buffer.from(text(signer.headers(method, path)), 'latin1')
    return this.currentRequest
  }
}

export function summarise(result: autocannon.Result): LoadSummary {
  return {
    req_per_s: Math.round(result.requests.average),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    status_codes: Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count])),
  }
}

/** process.hrtime in µs: the clock V8's profiler stamps its samples with on Linux. */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n)
}

/** User plus system CPU time a process has used, in µs, from /proc (Linux; clock ticks of 10 ms). */
export function cpuMicros(pid: number): number {
  // Fields after the command name (which may hold spaces) start at the state, field 3; utime and stime are 14 and 15.
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / CLOCK_TICKS_PER_S
}

/** cpuMicros of each of the process's threads, summed by name; the event loop's thread (tid = pid) is `main`. */
export function threadCpuMicros(pid: number): Map<string, number> {
  const byName = new Map<string, number>()
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    let stat: string
    try {
      stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
    } catch {
      continue // the thread ended meanwhile
    }
    const name = Number(tid) === pid ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    byName.set(name, (byName.get(name) ?? 0) + ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / CLOCK_TICKS_PER_S)
  }
  return byName
}

const CLOCK_TICKS_PER_S = 100
