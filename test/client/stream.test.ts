import assert from 'node:assert/strict'
import type { Socket } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { PerpetuaError, type StreamMessage } from '../../src/client/index.js'
import { backends } from '../support/database.js'
import { poll } from '../support/poll.js'
import type { KeyPair } from '../support/signing.js'
import { type ClientServer, startClientServer } from './server.js'

for (const backend of backends()) {
  describe(`the client follows a strategy's stream (${backend})`, () => {
    let server: ClientServer
    let key: KeyPair
    const sockets = new Set<Socket>()
    before(async () => {
      server = await startClientServer(backend, {}, { replay: true })
      // Every upgraded connection, so the test can drop them as a restarting server or a proxy would.
      server.t.app.server.on('upgrade', (_request, socket: Socket) => {
        sockets.add(socket)
        socket.on('close', () => sockets.delete(socket))
      })
      key = await server.t.createKey(['strategies:read', 'strategies:write'])
    })
    after(() => server.close())

    it('receives the current status, reconnects with a fresh ticket after the server drops the socket, and gets the status again', async () => {
      const client = server.client(key)
      const strategy = await client.strategies.create({ name: 'streamed', template_id: 'sma_cross', params: { fast: 3, slow: 8 }, symbols: ['BTCUSDT'], timeframe: '1m', capital: '1000' })
      await client.strategies.deploy(strategy.id, { dry_run: true })
      const messages: StreamMessage[] = []
      const opens: number[] = []
      const reconnecting: string[] = []
      const stream = client.strategies.follow(strategy.id, {
        onMessage: (message) => messages.push(message),
        onOpen: ({ reconnects }) => opens.push(reconnects),
        onReconnecting: ({ reason }) => reconnecting.push(reason),
        reconnectDelayMs: 50,
      })
      await poll('the first status', 10_000, () => messages[0])
      assert.equal(messages[0]!.type, 'status')
      assert.equal(messages[0]!.strategy_id, strategy.id)
      assert.equal(messages[0]!.data.status, 'deployed')

      assert.equal(sockets.size, 1)
      for (const socket of sockets) socket.destroy()
      await poll('a second status after the reconnect', 10_000, () => (messages.filter((m) => m.type === 'status').length >= 2 ? true : undefined))
      assert.deepEqual(opens, [0, 1])
      assert.equal(reconnecting.length, 1)

      // What happens meanwhile reaches the new connection: the pause's status.
      await client.strategies.pause(strategy.id)
      await poll('the paused status', 10_000, () => messages.find((m) => m.type === 'status' && m.data.status === 'paused'))
      stream.close()
      await stream.ended
      assert.equal(sockets.size, 0)
    })

    it('ends with the API’s error, without retrying, when the strategy is not the caller’s', async () => {
      const client = server.client(key)
      let ended: Error | undefined
      const stream = client.strategies.follow('strat_00000000', { onMessage: () => assert.fail('a message for a missing strategy'), onEnd: (error) => (ended = error) })
      await assert.rejects(stream.ended, (e: PerpetuaError) => e instanceof PerpetuaError && e.status === 404 && e.code === 'NOT_FOUND')
      assert.ok(ended instanceof PerpetuaError)
    })
  })
}
