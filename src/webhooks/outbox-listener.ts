import type { DatabaseHandle } from '../db/connect.js'
import { type ChannelListener, listenOnChannel } from '../db/listen.js'
import { OUTBOX_CHANNEL } from '../events/outbox.js'

/**
 * Calls `onEvent` when a transaction that recorded an event commits (recordEvent's NOTIFY), on this
 * node and, with a PostgreSQL server, on every node. Notifications are a latency hint only: the
 * dispatcher's sweep still finds anything a missed notification would have announced, and a
 * reconnected listener looks once at once.
 */
export function listenForEvents(database: DatabaseHandle, onEvent: () => void, onError: (error: unknown) => void): Promise<ChannelListener> {
  return listenOnChannel(database, OUTBOX_CHANNEL, () => onEvent(), onError, onEvent)
}
