import fs from 'node:fs'
import path from 'node:path'
import Fastify from 'fastify'

/**
 * The ceiling every HTTP bench compares against (issue 13): the same Fastify as the service, logger
 * off, one route, in its own process. Prints {"url"} on stdout once it listens; SIGTERM stops it.
 * With BARE_BYTES_DIR, GET /bytes/:name also answers that directory's file `name` as JSON, read once:
 * the fair ceiling for a route that sends a large body (the same bytes, nothing else of ours).
 */
const app = Fastify({ logger: false })
app.get('/', async () => ({ hello: 'world' }))
const bytesDir = process.env.BARE_BYTES_DIR
if (bytesDir) {
  const bodies = new Map<string, Buffer>()
  app.get<{ Params: { name: string } }>('/bytes/:name', async (request, reply) => {
    const name = path.basename(request.params.name)
    let body = bodies.get(name)
    if (!body) bodies.set(name, (body = fs.readFileSync(path.join(bytesDir, name))))
    return reply.type('application/json').send(body)
  })
}
const url = await app.listen({ port: 0, host: '127.0.0.1' })
process.stdout.write(`${JSON.stringify({ url })}\n`)
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)))
