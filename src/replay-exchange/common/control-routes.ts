import type { FastifyInstance } from 'fastify'
import type { ReplayClock } from './clock.js'
import { type Faults, type FaultSpec, parseFault } from './faults.js'
import type { RequestStats } from './request-hooks.js'

/** /__replay/*: faults and stats over HTTP, for the standalone process (`perpetua replay-exchange`). */
export function controlRoutes(app: FastifyInstance, faults: Faults, stats: RequestStats, clock: ReplayClock): void {
  const active = () => ({ active: faults.active().map(describeFault) })
  app.post('/__replay/faults', async (request, reply) => {
    let fault: FaultSpec
    try {
      fault = parseFault(request.body)
    } catch (error) {
      return reply.code(400).send({ error: (error as Error).message })
    }
    faults.add(fault)
    return reply.code(201).send(active())
  })
  app.get('/__replay/faults', async () => active())
  app.delete('/__replay/faults', async () => {
    faults.clear()
    return active()
  })
  app.get('/__replay/stats', async () => ({ ...stats.snapshot(), replayNow: clock.now() }))
  app.delete('/__replay/stats', async () => {
    stats.reset()
    return stats.snapshot()
  })
}

function describeFault(fault: FaultSpec): Record<string, unknown> {
  const { path, ...rest } = fault
  if (path === undefined) return rest
  // RegExp#source escapes "/" (new RegExp('^/a').source is '^\/a'); show it as it was given.
  return path instanceof RegExp ? { pathRegExp: path.source.replace(/\\\//g, '/'), ...rest } : { path, ...rest }
}
