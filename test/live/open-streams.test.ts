import assert from 'node:assert/strict'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import WebSocket, { WebSocketServer } from 'ws'
import { OpenStreams } from '../../src/live/stream/open-streams.js'

/** A server side socket of a real loopback WebSocket connection, and its client. */
async function connection(server: WebSocketServer): Promise<{ socket: WebSocket; client: WebSocket }> {
  const accepted = once(server, 'connection') as Promise<[WebSocket]>
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`)
  const [socket] = await accepted
  await once(client, 'open')
  return { socket, client }
}

const refedTimers = () => process.getActiveResourcesInfo().filter((type) => type === 'Timeout').length

describe('open status streams (the process registry)', () => {
  let server: WebSocketServer
  before(async () => {
    server = new WebSocketServer({ host: '127.0.0.1', port: 0 })
    await once(server, 'listening')
  })
  after(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it('keeps a token stream until it closes, and its expiry timer does not hold the process', async () => {
    const streams = new OpenStreams(Date.now)
    const { socket, client } = await connection(server)
    const timers = refedTimers()
    streams.add(socket, { expiresAt: Date.now() + 3_600_000 })
    assert.equal(streams.size, 1)
    assert.equal(refedTimers(), timers, 'the hour-long expiry timer is unreferenced')
    client.close()
    await once(socket, 'close')
    assert.equal(streams.size, 0)
  })

  it('does not keep a socket that closed while its stream was being set up', async () => {
    const streams = new OpenStreams(Date.now)
    const { socket, client } = await connection(server)
    client.close()
    await once(socket, 'close')
    streams.add(socket, { expiresAt: Date.now() + 3_600_000 })
    streams.add(socket, { keyId: 'key_1', keyVersion: 'v1' })
    assert.equal(streams.size, 0)
  })

  it('closes a token stream at its expiry with 4003', async () => {
    const streams = new OpenStreams(Date.now)
    const { socket, client } = await connection(server)
    const closed = once(client, 'close') as Promise<[number, Buffer]>
    streams.add(socket, { expiresAt: Date.now() + 50 })
    const [code, reason] = await closed
    assert.deepEqual([code, reason.toString()], [4003, 'app token expired'])
  })
})
