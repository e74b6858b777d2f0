import pg from 'pg'
import type { DatabaseHandle } from './connect.js'

export interface ChannelListener {
  close(): Promise<void>
}

/**
 * LISTENs on `channel` and calls `onPayload` with each notification's payload, on this node and, with
 * a PostgreSQL server, on every node. `onDisconnect` runs when the server connection drops and
 * `onReconnect` once it is back: notifications sent meanwhile are lost, so the caller looks for what
 * it missed.
 *
 * Server: a dedicated connection LISTENs, reconnecting after a drop. Embedded: PGlite is one session
 * shared by every pool connection, so one LISTEN covers them all, and a notification arrives on
 * whichever connection ran the COMMIT (measured: never on the one that issued LISTEN); every pool
 * client is therefore watched from the moment it is checked out.
 */
export async function listenOnChannel(
  database: DatabaseHandle,
  channel: string,
  onPayload: (payload: string) => void,
  onError: (error: unknown) => void,
  onReconnect: () => void = () => undefined,
  onDisconnect: () => void = () => undefined,
): Promise<ChannelListener> {
  if (!/^[a-z_]+$/.test(channel)) throw new Error(`channel ${channel} is not a plain identifier`)
  const handler = (message: pg.Notification) => {
    if (message.channel === channel) onPayload(message.payload ?? '')
  }
  return database.kind === 'embedded' ? listenEmbedded(database.pool, channel, handler) : listenServer(database.pool, channel, handler, onReconnect, onError, onDisconnect)
}

async function listenEmbedded(pool: pg.Pool, channel: string, handler: (message: pg.Notification) => void): Promise<ChannelListener> {
  const watched = new Set<pg.PoolClient>()
  const watch = (client: pg.PoolClient) => {
    if (watched.has(client)) return
    watched.add(client)
    client.on('notification', handler)
  }
  pool.on('acquire', watch)
  await pool.query(`LISTEN ${channel}`)
  return {
    async close() {
      pool.off('acquire', watch)
      for (const client of watched) client.off('notification', handler)
      watched.clear()
      await pool.query(`UNLISTEN ${channel}`).catch(() => undefined)
    },
  }
}

const RECONNECT_MS = 1000

async function listenServer(
  pool: pg.Pool,
  channel: string,
  handler: (message: pg.Notification) => void,
  onReconnect: () => void,
  onError: (error: unknown) => void,
  onDisconnect: () => void,
): Promise<ChannelListener> {
  let client: pg.Client | undefined
  let closed = false
  let retry: NodeJS.Timeout | undefined
  const connect = async (): Promise<void> => {
    const next = new pg.Client(pool.options)
    next.on('notification', handler)
    next.on('error', (error) => {
      onError(error)
      drop(next)
    })
    next.on('end', () => drop(next))
    await next.connect()
    await next.query(`LISTEN ${channel}`)
    if (closed) return void (await next.end().catch(() => undefined))
    client = next
  }
  const drop = (dropped: pg.Client) => {
    if (closed || client !== dropped) return
    client = undefined
    onDisconnect()
    schedule()
  }
  const schedule = () => {
    retry = setTimeout(() => {
      connect().then(onReconnect, (error: unknown) => {
        onError(error)
        if (!closed) schedule()
      })
    }, RECONNECT_MS)
    retry.unref()
  }
  await connect()
  return {
    async close() {
      closed = true
      clearTimeout(retry)
      await client?.end().catch(() => undefined)
    },
  }
}
