import pg from 'pg'
import type { DatabaseHandle } from '../db/connect.js'
import { OUTBOX_CHANNEL } from '../events/outbox.js'

/**
 * Calls `onEvent` when a transaction that recorded an event commits (recordEvent's NOTIFY), on this
 * node and, with a PostgreSQL server, on every node. Notifications are a latency hint only: the
 * dispatcher's sweep still finds anything a missed notification would have announced.
 *
 * Server: a dedicated connection LISTENs, reconnecting after a drop. Embedded: PGlite is one session
 * shared by every pool connection, so one LISTEN covers them all, and a notification arrives on
 * whichever connection ran the COMMIT (measured: never on the one that issued LISTEN); every pool
 * client is therefore watched from the moment it is checked out.
 */
export async function listenForEvents(database: DatabaseHandle, onEvent: () => void, onError: (error: unknown) => void): Promise<{ close(): Promise<void> }> {
  const handler = (message: pg.Notification) => {
    if (message.channel === OUTBOX_CHANNEL) onEvent()
  }
  return database.kind === 'embedded' ? listenEmbedded(database.pool, handler) : listenServer(database.pool, handler, onEvent, onError)
}

async function listenEmbedded(pool: pg.Pool, handler: (message: pg.Notification) => void) {
  const watched = new Set<pg.PoolClient>()
  const watch = (client: pg.PoolClient) => {
    if (watched.has(client)) return
    watched.add(client)
    client.on('notification', handler)
  }
  pool.on('acquire', watch)
  await pool.query(`LISTEN ${OUTBOX_CHANNEL}`)
  return {
    async close() {
      pool.off('acquire', watch)
      for (const client of watched) client.off('notification', handler)
      watched.clear()
      await pool.query(`UNLISTEN ${OUTBOX_CHANNEL}`).catch(() => undefined)
    },
  }
}

const RECONNECT_MS = 1000

async function listenServer(pool: pg.Pool, handler: (message: pg.Notification) => void, onEvent: () => void, onError: (error: unknown) => void) {
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
    await next.query(`LISTEN ${OUTBOX_CHANNEL}`)
    if (closed) return void (await next.end().catch(() => undefined))
    client = next
  }
  const drop = (dropped: pg.Client) => {
    if (closed || client !== dropped) return
    client = undefined
    schedule()
  }
  const schedule = () => {
    retry = setTimeout(() => {
      // Events committed while the connection was down announced nothing: look once reconnected.
      connect().then(onEvent, (error: unknown) => {
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
