import type { FastifyInstance } from 'fastify'
import type { Faults } from './faults.js'

const UPSTREAM_PATH = /^\/(fapi|futures\/data)\//
const ARCHIVE_PATH = /^\/data\//

/** Counts of REST requests by path (what a gateway cost its upstream), and of archive files asked for. */
export class RequestStats {
  private counts = new Map<string, number>()
  private archive = new Map<string, number>()

  count(path: string): void {
    this.counts.set(path, (this.counts.get(path) ?? 0) + 1)
  }

  countArchive(path: string): void {
    this.archive.set(path, (this.archive.get(path) ?? 0) + 1)
  }

  /** `archiveFiles`: requests for zips (their `.CHECKSUM` companions not counted); `archiveByPath`: every archive request. */
  snapshot(): { requests: number; byPath: Record<string, number>; archiveFiles: number; archiveByPath: Record<string, number> } {
    let requests = 0
    for (const n of this.counts.values()) requests += n
    let archiveFiles = 0
    for (const [path, n] of this.archive) if (path.endsWith('.zip')) archiveFiles += n
    return { requests, byPath: Object.fromEntries(this.counts), archiveFiles, archiveByPath: Object.fromEntries(this.archive) }
  }

  reset(): void {
    this.counts = new Map()
    this.archive = new Map()
  }
}

/**
 * Runs before routing: counts upstream requests, then applies the first matching fault (latency,
 * then a status answer or a dropped socket). /__replay/* is left alone so a test can always undo
 * its faults.
 */
export function installRequestHooks(app: FastifyInstance, faults: Faults, stats: RequestStats): void {
  app.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?')[0]!
    if (path.startsWith('/__replay/')) return
    if (UPSTREAM_PATH.test(path)) stats.count(path)
    else if (ARCHIVE_PATH.test(path)) stats.countArchive(path)
    const apiKey = request.headers['x-mbx-apikey']
    const fault = faults.take(request.url, 'request', typeof apiKey === 'string' ? apiKey : undefined)
    if (!fault) return
    if (fault.latencyMs) await new Promise((resolve) => setTimeout(resolve, fault.latencyMs))
    if (fault.drop) {
      reply.hijack()
      request.raw.socket.destroy()
      return reply
    }
    if (fault.status !== undefined) {
      if (fault.retryAfterSeconds !== undefined) reply.header('retry-after', String(fault.retryAfterSeconds))
      return reply.code(fault.status).send(faultBody(fault.status))
    }
    return
  })
}

function faultBody(status: number): { code: number; msg: string } {
  if (status === 429) return { code: -1003, msg: 'Too many requests; injected by the replay exchange.' }
  if (status === 418) return { code: -1003, msg: 'Way too many requests; IP banned (injected by the replay exchange).' }
  if (status === 404) return { code: -1000, msg: 'Not found (injected by the replay exchange).' }
  return { code: -1001, msg: 'Internal error; unable to process your request. Please try again.' }
}
