import Fastify from 'fastify'

/**
 * The ceiling every HTTP bench compares against (issue 13): the same Fastify as the service, logger
 * off, one route, in its own process. Prints {"url"} on stdout once it listens; SIGTERM stops it.
 */
const app = Fastify({ logger: false })
app.get('/', async () => ({ hello: 'world' }))
const url = await app.listen({ port: 0, host: '127.0.0.1' })
process.stdout.write(`${JSON.stringify({ url })}\n`)
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)))
