import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { describe, it } from 'node:test'
import Fastify from 'fastify'
import { pino } from 'pino'
import { lazyChildLogger } from '../../src/http/lazy-logger.js'

function appLoggingTo(lines: Record<string, unknown>[], level: string) {
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>)
      done()
    },
  })
  const app = Fastify({ loggerInstance: pino({ level }, stream), childLoggerFactory: lazyChildLogger, genReqId: () => 'req-1' })
  app.get('/quiet', async () => ({ ok: true }))
  app.get('/loud', async (request) => {
    request.log.info({ step: 1 }, 'below the level')
    request.log.warn({ step: 2 }, 'at the level')
    request.log.child({ extra: 'x' }).error('from a grandchild')
    return { ok: true }
  })
  return app
}

describe('lazy request loggers', () => {
  it('write enabled levels with the request id binding, and nothing below the level', async () => {
    const lines: Record<string, unknown>[] = []
    const app = appLoggingTo(lines, 'warn')
    assert.equal((await app.inject({ method: 'GET', url: '/quiet' })).statusCode, 200)
    assert.deepEqual(lines, [])
    assert.equal((await app.inject({ method: 'GET', url: '/loud' })).statusCode, 200)
    assert.deepEqual(
      lines.map(({ level, reqId, step, extra, msg }) => ({ level, reqId, step, extra, msg })),
      [
        { level: 40, reqId: 'req-1', step: 2, extra: undefined, msg: 'at the level' },
        { level: 50, reqId: 'req-1', step: undefined, extra: 'x', msg: 'from a grandchild' },
      ],
    )
    await app.close()
  })

  it("keep Fastify's own request lines at level info", async () => {
    const lines: Record<string, unknown>[] = []
    const app = appLoggingTo(lines, 'info')
    await app.inject({ method: 'GET', url: '/quiet' })
    assert.deepEqual(
      lines.map(({ reqId, msg }) => ({ reqId, msg })),
      [
        { reqId: 'req-1', msg: 'incoming request' },
        { reqId: 'req-1', msg: 'request completed' },
      ],
    )
    await app.close()
  })
})
