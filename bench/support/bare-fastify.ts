import fs from 'node:fs'
import path from 'node:path'
import Fastify from 'fastify'

/**
 * The ceiling every HTTP bench compares against (issues 13 and 36): the same Fastify as the service, logger
 * off, in its own process. GET /bytes/:name answers BARE_BYTES_DIR's file `name` as JSON, read once: a route's
 * own answer, so the ceiling does the same work with nothing else of ours. Prints {"url"} on stdout once it
 * listens; SIGTERM stops it.
 */
const app = Fastify({ logger: false })
const bytesDir = process.env.BARE_BYTES_DIR
if (!bytesDir) throw new Error('BARE_BYTES_DIR is not set')
const bodies = new Map<string, Buffer>()
app.get<{ Params: { name: string } }>('/bytes/:name', async (request, reply) => {
  const name = path.basename(request.params.name)
  let body = bodies.get(name)
  if (!body) bodies.set(name, (body = fs.readFileSync(path.join(bytesDir, name))))
  return reply.type('application/json').send(body)
})
const url = await app.listen({ port: 0, host: '127.0.0.1' })
process.stdout.write(`${JSON.stringify({ url })}\n`)
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)))
